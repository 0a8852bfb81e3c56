import Foundation
@_exported import TestSupport
import OnboardingModel
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the real `onboard` binary built next to the test bundle.
enum CLI {
    /// The `onboard` executable: `$ONBOARD_BINARY`, else the one in the test bundle's build directory.
    static let binary: URL = {
        if let override = ProcessInfo.processInfo.environment["ONBOARD_BINARY"] {
            return URL(fileURLWithPath: override)
        }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("onboard")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/onboard")
    }()

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        let stdoutBytes: Data
    }

    /// Runs `onboard` (or `executable`) with `arguments`, feeding `input` on stdin, and waits for it.
    @discardableResult
    static func run(
        _ arguments: [String], input: Data? = nil, environment: [String: String] = [:],
        in directory: TemporaryDirectory? = nil, executable: URL? = nil
    ) throws -> Result {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let outURL = scratch.url.appendingPathComponent("stdout")
        let errURL = scratch.url.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let process = ChildProcess()
        process.executableURL = executable ?? binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["ONBOARD_STORE"] = nil
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let directory { process.currentDirectoryURL = directory.url }
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        process.standardOutput = outHandle
        process.standardError = errHandle
        let inputPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        try process.run()
        if let input {
            inputPipe.fileHandleForWriting.write(input)
            try inputPipe.fileHandleForWriting.close()
        }
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        let out = try Data(contentsOf: outURL)
        let err = try Data(contentsOf: errURL)
        return Result(
            status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self), stdoutBytes: out)
    }
}

/// Events of every type, with the awkward text a real log meets.
enum Corpus {
    static let base = Timestamp(millisecondsSince1970: 1_796_054_400_123)

    static func uuid(_ number: Int) -> UUID {
        UUID(uuidString: String(format: "00000000-0000-4000-8000-%012x", number))!
    }

    /// One event of every payload shape, with Unicode (accents, emoji, right-to-left, CJK), a
    /// 4,096-byte name, and null users and sessions.
    static func everyType() -> [Event] {
        let payloads: [(String?, Payload)] = [
            (
                "zoë",
                .userAdded(
                    displayName: "Zoë Ångström-Łukasiewicz", subtitle: "Infirmière 👩‍⚕️", imageRef: "avatars/zoë.png",
                    passcodePolicy: .numeric, passcodeMinLength: 6)
            ),
            ("يوسف", .userAdded(displayName: "يوسف الحسن", subtitle: nil, imageRef: nil, passcodePolicy: .alphanumeric, passcodeMinLength: 8)),
            (
                "long",
                .userAdded(
                    displayName: String(repeating: "é", count: 2048), subtitle: String(repeating: "漢", count: 1365),
                    imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 64)
            ),
            ("zoë", .userProfileUpdated(displayName: nil, subtitle: "Cheffe de service \"A\", aile nord\\sud", imageRef: nil)),
            ("zoë", .userProfileUpdated(displayName: "Zoë Å.", subtitle: "slash / back\\slash \"quoted\" ‏שלום‎", imageRef: "x")),
            ("zoë", .userSelected), ("zoë", .userRemoved(reason: .passcodeRetryLimit)),
            ("zoë", .passcodeSet), ("zoë", .passcodeChanged), ("zoë", .passcodeResetStarted), ("zoë", .passcodeResetCompleted),
            ("zoë", .biometricEnabled(kind: .fingerprint)), ("zoë", .biometricDisabled),
            ("alice@example.org", .signInStarted(method: .apple)),
            ("alice@example.org", .signInFailed(method: .password, reason: .invalidPassword)),
            (nil, .signInFailed(method: .password, reason: .unknownUser)),
            ("alice@example.org", .signInFailed(method: .google, reason: .networkUnavailable)),
            ("alice@example.org", .signInThrottled(method: .password, retryAfter: base.adding(milliseconds: 300_000))),
            ("alice@example.org", .secondFactorRequired(method: .recoveryCode)),
            ("alice@example.org", .secondFactorFailed(method: .totp)),
            ("alice@example.org", .secondFactorSucceeded(method: .sms)),
            ("alice@example.org", .signInSucceeded(method: .password, secondFactor: true)),
            ("alice@example.org", .signedOut(reason: .revoked)),
            (nil, .captchaPresented(purpose: .createAccount)), (nil, .captchaFailed), (nil, .captchaPassed),
            (nil, .captchaAlternativesViewed),
            ("alice@example.org", .passwordResetRequested(route: .username)), ("alice@example.org", .temporaryPasswordSent),
            ("alice@example.org", .passwordChanged(forced: false)),
            (nil, .accountCreationStarted), (nil, .fieldValidated(field: .username, result: .usernameInUse)),
            (nil, .fieldValidated(field: .passwordConfirmation, result: .passwordsDoNotMatch)),
            (nil, .accountCreationFailed(field: .username, reason: .usernameInUse)),
            (nil, .accountCreationFailed(field: nil, reason: .serverError)),
            ("new.user", .accountCreated), ("alice@example.org", .lockoutCleared(reason: .admin)),
            // Vocabulary schema 2.
            ("alice@example.org", .signInStarted(method: .password, identifierKind: .email)),
            (nil, .fieldEdited(field: .email, filled: true, valid: nil)),
            ("zoë", .fieldEdited(field: .passcode, filled: false, valid: false)),
            (nil, .fieldValidated(field: .email, result: .emailInUse)), (nil, .accountCreationSubmitted),
            (nil, .passwordResetStarted), (nil, .passwordResetFailed(reason: .rateLimited))
        ]
        return payloads.enumerated().map { index, pair in
            Event(
                id: uuid(index + 1), device: index % 3 == 0 ? "kiosk-7" : "phone.A_1:x",
                at: base.adding(milliseconds: Int64(index) * 1_001),
                user: pair.0, flow: index % 4 == 3 ? nil : uuid(1000 + index / 5), payload: pair.1)
        }
    }

    /// Canonical JSONL with seqs 1…n, as `onboard export` writes it.
    static func jsonl(_ events: [Event]) -> String {
        events.enumerated().map { EventJSON.encode($1, seq: UInt64($0 + 1)) + "\n" }.joined()
    }

    /// `count` sign-in events over `users` users, deterministic for a seed.
    /// The device is the one the sync tests enrol: a device uploads only its own events.
    static func generated(count: Int, seed: UInt64, device: String = "kiosk-7") -> [Event] {
        var random = SplitMix64(seed: seed)
        let methods: [SignInMethod] = [.password, .passcode, .biometric]
        return (0..<count).map { index in
            let user = "user-\(Int.random(in: 0..<500, using: &random))"
            let payload: Payload =
                switch Int.random(in: 0..<4, using: &random) {
                case 0: .signInStarted(method: methods.randomElement(using: &random)!)
                case 1: .signInFailed(method: .password, reason: .invalidPassword)
                case 2: .signInSucceeded(method: .password, secondFactor: Bool.random(using: &random))
                default: .userProfileUpdated(displayName: "Name \(index) — ü", subtitle: nil, imageRef: nil)
                }
            return Event(
                id: UUID(uuid: withUnsafeBytes(of: (random.next(), random.next())) { $0.load(as: uuid_t.self) }),
                device: device, at: base.adding(milliseconds: Int64(index) * 250),
                user: user, flow: nil, payload: payload)
        }
    }
}
