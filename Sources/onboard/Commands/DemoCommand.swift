import Foundation
import HTTPServer
import OnboardingModel
import OnboardingServer
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import OnboardingProjections
import OnboardingStore

/// `onboard demo`: a scripted walk through the flows of the three design documents on a fresh store.
enum DemoCommand {
    static let spec = CommandSpec(
        name: "demo",
        summary: "record a scripted story of the three onboarding flows on a fresh store and show it",
        arguments: "",
        details: [
            "Two people share a ward iPad: one types a passcode too short for his policy, then mistypes",
            "it; another signs in with a password and a two-factor code, and resets a forgotten password",
            "(the first request fails without network); then a newcomer creates an account with a taken",
            "username and a CAPTCHA. After each step: the screen, its state, the fields filled and whether",
            "its submit button is enabled. Without --store the demo uses a new temporary store and prints",
            "its path so you can explore it with the other commands."
        ],
        options: [.store],
        argumentCount: 0...0,
        run: run)

    /// One step of the story: who, what, and the line the reader sees.
    struct Step {
        let user: String?
        /// `nil`: no event, only time passes (the screen read again shows what the clock changed).
        let payload: Payload?
        let narration: String
        /// Seconds after the previous step.
        let pause: Int64
    }

    struct Scene {
        let title: String
        let steps: [Step]
    }

    static let device = "ward-3-ipad"

    static func storeCall<T>(_ body: () throws -> T) throws(CLIError) -> T {
        do { return try body() } catch let error as StoreError {
            throw CLIError(error)
        } catch {
            throw CLIError(ExitCode.software, "onboard demo: \(error)")
        }
    }

    /// Starts a sync server on a free loopback port, uploads the log, and shows what the server
    /// acknowledged and the history it serves an auditor.
    static func syncToLoopbackServer(_ store: OnboardingStore, output: inout Output) throws(CLIError) {
        output.line()
        output.line("\(scenes.count + 2). Sync: the log replays to a server once sign-in completes")
        let data = store.path + "-server"
        let server = try storeCall { try SyncServer(dataDirectory: data) }
        defer { server.close() }
        let http = HTTPServer(port: 0, limits: SyncHTTPHandler.limits, handler: SyncHTTPHandler(server: server))
        try storeCall { try http.start() }
        defer { http.stop() }
        let base = URL(string: "http://127.0.0.1:\(http.port)")!
        // Enrolment as an admin does it (POST /v1/devices): the device's public key is registered,
        // so the server checks the signed head of every batch.
        let publicKey = try storeCall { try store.signingPublicKey() }
        let enrolment = server.handle(
            SyncRequest(
                method: "POST", path: SyncPaths.devices,
                headers: [
                    "authorization": "Bearer \(server.createdAdminToken ?? "")",
                    "content-type": "application/json"
                ],
                body: SyncWire.enrolBody(device: store.deviceID, publicKey: publicKey)))
        guard enrolment.status == 201, let deviceToken = try? SyncWire.token(from: enrolment.body) else {
            throw CLIError(
                ExitCode.software,
                "onboard demo: enrolling \(store.deviceID) failed with status \(enrolment.status): \(String(decoding: enrolment.body, as: UTF8.self))")
        }
        let auditorToken = try storeCall { try server.issueToken(role: .auditor) }
        let keyNote = publicKey.map { " with its signing key \($0.hex.prefix(16))…" } ?? ""
        output.line("   server on \(base.absoluteString), data in \(data); \(store.deviceID) enrolled\(keyNote)")
        output.flush()
        let transport: HTTPTransport
        do { transport = try HTTPTransport(baseURL: base) } catch { throw CLIError(ExitCode.software, "onboard demo: \(error)") }
        // Pinned as an operator would hand it over at enrolment: the server's later forget requests are honoured.
        let client = SyncClient(store: store, transport: transport, token: deviceToken, batchEvents: 16, serverKey: server.signingKey.publicKey)
        let summary = try wait { () async throws(SyncError) -> SyncSummary in try await client.run() }
        output.line("   the server acknowledged seq \(summary.acknowledgedSeq): \(summary.appended) events in \(summary.batches) batches,")
        output.line("   stored durably with the same seqs and hashes as this device")
        let history = try wait { () async throws -> SyncResponse in
            try await transport.send(
                SyncRequest(
                    method: "GET", path: SyncPaths.history(user: "alice"),
                    headers: ["authorization": "Bearer \(auditorToken)"]))
        }
        if history.status == 200, let value = try? JSONValue.parse(bytes: history.body),
            case .array(let attempts)? = value["attempts"], case .array(let sessions)? = value["sessions"]
        {
            let failed = attempts.filter { $0["outcome"] == .string("failed") }.count
            output.line("   an auditor asks for alice's history across devices: \(attempts.count) attempts (\(failed) failed), \(sessions.count) sessions")
        } else {
            output.line("   the history request failed with status \(history.status)")
        }
    }

    /// Runs async work and turns its failure into the demo's error.
    static func wait<T: Sendable, E: Error>(_ work: @escaping @Sendable () async throws(E) -> T) throws(CLIError) -> T {
        switch runBlocking(work) {
        case .success(let value): return value
        case .failure(let error): throw CLIError(ExitCode.unavailable, "onboard demo: sync failed: \(error)")
        }
    }

    /// The screen line: screen (state), whether its submit button is enabled (screens with a
    /// form), the fields of that form the app reported, then the messages.
    static func describe(_ flow: Flow) -> String {
        var parts = ["\(flow.screen.rawValue) (\(flow.state.rawValue))"]
        let formFields = flow.screen.formFields
        if !formFields.isEmpty { parts.append("submit \(flow.submitEnabled ? "enabled" : "disabled")") }
        // The badge on the sign-in button while the user has biometric sign-in on.
        if flow.screen == .signIn, let kind = flow.biometric {
            parts.append(kind == .face ? "Face ID badge" : kind == .touch ? "Touch ID badge" : "fingerprint badge")
        }
        let fields = flow.fields.filter { formFields.contains($0.field) }
        if !fields.isEmpty { parts.append(SessionCommand.fieldsText(fields)) }
        parts += flow.fieldMessages.map { "\($0.field): \"\($0.text)\" [\($0.severity.rawValue)]" }
        if let message = flow.systemMessage { parts.append("\"\(message.text)\" [\(message.severity.rawValue)]") }
        if let resend = flow.resend { parts.append("resend from \(resend.availableAt.iso8601.dropFirst(11).prefix(8))") }
        return parts.joined(separator: " · ")
    }

    static func describe(_ decision: LockoutDecision) -> String {
        switch decision {
        case .allowed(let failures): return "allowed (\(failures) counted failure\(failures == 1 ? "" : "s"))"
        case .locked(let lock): return "locked until \(lock.until.iso8601) (\(lock.failures) failures)"
        case .permanentlyLocked: return "locked until cleared"
        }
    }

    static var scenes: [Scene] {
        [
            Scene(
                title: "A shared device is set up for two people",
                steps: [
                    Step(
                        user: "alice",
                        payload: .userAdded(
                            displayName: "Alice Martin", subtitle: "Charge Nurse", imageRef: nil,
                            passcodePolicy: .numeric, passcodeMinLength: 6),
                        narration: "Alice is added to the ward iPad (no photo: shown as \"AM\")", pause: 0),
                    Step(user: "alice", payload: .passcodeSet, narration: "she chooses a 6-digit passcode (never stored)", pause: 20),
                    Step(user: "alice", payload: .biometricEnabled(kind: .face), narration: "and turns on Face ID", pause: 5),
                    Step(
                        user: "jose",
                        payload: .userAdded(
                            displayName: "José Álvarez", subtitle: "Physician", imageRef: "avatars/jose.png",
                            passcodePolicy: .alphanumeric, passcodeMinLength: 8),
                        narration: "José is added with a photo and an alphanumeric passcode policy", pause: 40),
                    Step(user: "jose", payload: .passcodeSet, narration: "he sets his passcode", pause: 15),
                    Step(
                        user: nil, payload: .signInOptionsShown(options: [.google, .apple, .password, .passcode, .biometric], platform: .ios),
                        narration: "the app records what its sign-in screen offers, top to bottom (a first build: Google above Apple)",
                        pause: 10),
                    Step(
                        user: nil, payload: .signInOptionsShown(options: [.apple, .google, .password, .passcode, .biometric], platform: .ios),
                        narration: "the next build puts Sign in with Apple first, as App Store guideline 4.8 asks on iOS", pause: 60)
                ]),
            Scene(
                title: "José signs in on the shared device and mistypes his passcode",
                steps: [
                    Step(
                        user: "jose", payload: .userSwitchOpened,
                        narration: "someone taps \"Switch or Add User\": the list of the iPad's users", pause: 3600),
                    Step(user: "jose", payload: .userSelected, narration: "José taps his name: the checkmark moves to him", pause: 3),
                    Step(
                        user: "jose", payload: .userSwitchClosed,
                        narration: "\"Back\": his sign-in screen, the passcode field empty, \"Sign In\" disabled", pause: 2),
                    Step(
                        user: "jose", payload: .fieldEdited(field: .passcode, filled: true, valid: false),
                        narration: "he types five characters: too short for his 8-character policy, \"Sign In\" stays disabled", pause: 3),
                    Step(
                        user: "jose", payload: .fieldEdited(field: .passcode, filled: true, valid: true),
                        narration: "the eighth fits the policy: \"Sign In\" enables (the passcode itself is never recorded)", pause: 2),
                    Step(user: "jose", payload: .signInStarted(method: .passcode), narration: "he taps \"Sign In\"", pause: 1),
                    Step(
                        user: "jose", payload: .signInFailed(method: .passcode, reason: .invalidPasscode),
                        narration: "wrong passcode: counted toward the lockout", pause: 1),
                    Step(
                        user: "jose", payload: .fieldEdited(field: .passcode, filled: false, valid: nil),
                        narration: "the app empties the passcode field: \"Sign In\" disabled again", pause: 1),
                    Step(
                        user: "jose", payload: .fieldEdited(field: .passcode, filled: true, valid: true),
                        narration: "he types it again, carefully", pause: 5),
                    Step(user: "jose", payload: .signInStarted(method: .passcode), narration: "tries again", pause: 1),
                    Step(
                        user: "jose", payload: .signInSucceeded(method: .passcode, secondFactor: false),
                        narration: "signed in (this is when sync will replay the log)", pause: 1),
                    Step(user: "jose", payload: .signedOut(reason: .user), narration: "and signs out at the end of his round", pause: 900),
                    Step(
                        user: "jose", payload: .passcodeResetStarted,
                        narration: "the next morning he has forgotten it: \"Forgot Passcode?\" opens its own screen, \"Reset\" disabled",
                        pause: 43_200),
                    Step(
                        user: "jose", payload: .fieldEdited(field: .passcode, filled: true, valid: true),
                        narration: "he types a new passcode that fits his policy: \"Reset\" enables", pause: 8),
                    Step(
                        user: "jose", payload: .passcodeResetCompleted,
                        narration: "the passcode is reset: back to \"Sign In\" with a green confirmation", pause: 3)
                ]),
            Scene(
                title: "Alice signs in with her password and a two-factor code",
                steps: [
                    Step(user: "alice", payload: .userSelected, narration: "Alice selects herself", pause: 120),
                    Step(
                        user: "alice", payload: .fieldEdited(field: .password, filled: true, valid: nil),
                        narration: "types her password (no username: she is the selected user)", pause: 6),
                    Step(user: "alice", payload: .signInStarted(method: .password), narration: "taps \"Sign In\"", pause: 2),
                    Step(user: "alice", payload: .secondFactorRequired(method: .totp), narration: "the server asks for a 2FA code", pause: 1),
                    Step(
                        user: "alice", payload: .fieldEdited(field: .secondFactorCode, filled: true, valid: nil),
                        narration: "she types the code from her authenticator app", pause: 8),
                    Step(
                        user: "alice", payload: .secondFactorFailed(method: .totp),
                        narration: "a stale code: \"Verification failed\" under the code field", pause: 4),
                    Step(user: "alice", payload: .secondFactorSucceeded(method: .totp), narration: "the fresh code works", pause: 9),
                    Step(
                        user: "alice", payload: .signInSucceeded(method: .password, secondFactor: true),
                        narration: "signed in with a second factor", pause: 1),
                    Step(user: "alice", payload: .signedOut(reason: .sessionExpired), narration: "her session expires", pause: 28_800)
                ]),
            Scene(
                title: "Someone guesses Alice's password",
                steps: [
                    Step(
                        user: "alice", payload: .fieldEdited(field: .password, filled: true, valid: nil),
                        narration: "someone at the iPad types a password for Alice", pause: 3600),
                    Step(
                        user: "alice", payload: .signInFailed(method: .password, reason: .invalidPassword),
                        narration: "a wrong password: \"Invalid password\" under the field", pause: 5),
                    Step(user: "alice", payload: .signInFailed(method: .password, reason: .invalidPassword), narration: "another", pause: 8),
                    Step(
                        user: "alice", payload: .signInFailed(method: .password, reason: .networkUnavailable),
                        narration: "the Wi-Fi drops: shown, but never counted as a guess", pause: 6),
                    Step(user: "alice", payload: .signInFailed(method: .password, reason: .invalidPassword), narration: "a third guess", pause: 6),
                    Step(user: "alice", payload: .signInFailed(method: .password, reason: .invalidPassword), narration: "a fourth", pause: 6),
                    Step(
                        user: "alice", payload: .signInFailed(method: .password, reason: .invalidPassword),
                        narration: "the fifth in five minutes: MediaWiki's throttle locks the key", pause: 6),
                    Step(
                        user: "alice", payload: .signInThrottled(method: .password, retryAfter: .init(millisecondsSince1970: 0)),
                        narration: "a sixth try a minute later is refused before any password check (audited, not counted)", pause: 60),
                    Step(
                        user: "alice", payload: nil,
                        narration: "nobody touches the iPad: two minutes on, the screen counts down by itself (no event)", pause: 120),
                    Step(
                        user: "alice", payload: nil,
                        narration: "the five minutes are over: the lock has ended by itself, the form is back as it was left", pause: 120)
                ]),
            Scene(
                title: "Alice forgot her password",
                steps: [
                    Step(
                        user: nil, payload: .passwordResetStarted,
                        narration: "she taps \"Forgot password?\" (the app does not know whose account yet)", pause: 86_400),
                    Step(
                        user: nil, payload: .fieldEdited(field: .email, filled: true, valid: nil),
                        narration: "types her email address: \"Send\" enables", pause: 6),
                    Step(user: nil, payload: .passwordResetRequested(route: .email), narration: "and sends it", pause: 2),
                    Step(
                        user: nil, payload: .passwordResetFailed(reason: .networkUnavailable),
                        narration: "the ward's Wi-Fi is down: the request never left the iPad", pause: 2),
                    Step(user: nil, payload: .passwordResetRequested(route: .email), narration: "she sends it again once the Wi-Fi is back", pause: 40),
                    Step(
                        user: "alice", payload: .temporaryPasswordSent,
                        narration: "\"Temporary password sent via email\" (the password itself is never recorded)", pause: 2),
                    Step(
                        user: "alice", payload: .fieldEdited(field: .password, filled: true, valid: nil),
                        narration: "she types the temporary password from the mail", pause: 90),
                    Step(user: "alice", payload: .signInStarted(method: .password), narration: "and signs in with it", pause: 5),
                    Step(user: "alice", payload: .passwordChanged(forced: true), narration: "and must choose a new one", pause: 30),
                    Step(user: "alice", payload: .signInSucceeded(method: .password, secondFactor: false), narration: "signed in again", pause: 1)
                ]),
            Scene(
                title: "A newcomer creates an account",
                steps: [
                    Step(user: nil, payload: .accountCreationStarted, narration: "someone taps \"Create account\" (no user id yet)", pause: 600),
                    Step(user: nil, payload: .fieldEdited(field: .username, filled: true, valid: nil), narration: "types a username", pause: 4),
                    Step(
                        user: nil, payload: .fieldValidated(field: .username, result: .usernameInUse),
                        narration: "\"maria\": \"Username already in use\" (red)", pause: 3),
                    Step(
                        user: nil, payload: .fieldValidated(field: .username, result: .usernameAvailable),
                        narration: "\"maria.k\" is available", pause: 6),
                    Step(
                        user: nil, payload: .fieldEdited(field: .password, filled: true, valid: true),
                        narration: "a password the app finds strong enough: \"Create account\" enables", pause: 8),
                    Step(
                        user: nil, payload: .fieldEdited(field: .passwordConfirmation, filled: true, valid: nil),
                        narration: "and the same again to confirm it", pause: 4),
                    Step(
                        user: nil, payload: .fieldValidated(field: .passwordConfirmation, result: .passwordsDoNotMatch),
                        narration: "\"Passwords do not match\" (yellow) while she types", pause: 3),
                    Step(
                        user: nil, payload: .fieldValidated(field: .passwordConfirmation, result: .passwordsMatch),
                        narration: "\"Passwords match\" (green)", pause: 5),
                    Step(user: nil, payload: .captchaPresented(purpose: .createAccount), narration: "a CAPTCHA appears", pause: 2),
                    Step(user: nil, payload: .fieldEdited(field: .captcha, filled: true, valid: nil), narration: "she types what she reads", pause: 6),
                    Step(user: nil, payload: .captchaFailed, narration: "\"Wrong code. Please try again.\" (the answer is never recorded)", pause: 3),
                    Step(user: nil, payload: .captchaPresented(purpose: .createAccount), narration: "a new image", pause: 2),
                    Step(user: nil, payload: .captchaFailed, narration: "wrong again", pause: 5),
                    Step(user: nil, payload: .captchaPresented(purpose: .createAccount), narration: "another image", pause: 2),
                    Step(
                        user: nil, payload: .captchaFailed,
                        narration: "a third wrong answer in a row: the CAPTCHA now also says how else to get an account", pause: 5),
                    Step(user: nil, payload: .captchaPassed, narration: "solved", pause: 11),
                    Step(user: nil, payload: .accountCreationSubmitted, narration: "she taps \"Create account\": the form is sent", pause: 2),
                    Step(user: "maria.k", payload: .accountCreated, narration: "the account maria.k exists", pause: 1)
                ]),
            Scene(
                title: "A locum joins the ward for a day, and leaves",
                steps: [
                    Step(user: "sam", payload: .userSwitchOpened, narration: "\"Switch or Add User\" on the ward iPad", pause: 3600),
                    Step(
                        user: "sam",
                        payload: .userAdded(
                            displayName: "Sam Okafor", subtitle: "Locum Nurse", imageRef: nil, passcodePolicy: .numeric,
                            passcodeMinLength: 6),
                        narration: "\"Add User\": Sam is onboarded and listed", pause: 30),
                    Step(user: "sam", payload: .userSelected, narration: "the new user is picked: Sam's sign-in screen", pause: 3),
                    Step(
                        user: "sam", payload: .userRemoved(reason: .admin),
                        narration: "at the end of the day an administrator removes him: the iPad moves to the previous user", pause: 30_000)
                ])
        ]
    }

    static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
        let path: String
        if let given = invocation.values["store"] ?? invocation.environment["ONBOARD_STORE"], !given.isEmpty {
            let contents = (try? FileManager.default.contentsOfDirectory(atPath: given)) ?? []
            if FileManager.default.fileExists(atPath: given) && !contents.isEmpty {
                throw .usage("onboard demo: \(given) already exists; the demo needs a fresh store, pass a new --store path")
            }
            path = given
        } else {
            path = NSTemporaryDirectory() + "onboard-demo-" + UUID().uuidString.prefix(8).lowercased() + ".lmdb"
        }
        var options = OnboardingStore.Options()
        options.deviceID = device
        let store: OnboardingStore
        do { store = try OnboardingStore.open(at: path, options: options) } catch { throw CLIError(error) }
        defer { store.close() }

        var output = Output.standardOutput()
        output.line("OnboardingStore demo — every sign-in action becomes an event in a hash-chained LMDB log")
        output.line("store: \(path)   device: \(device)")
        var clock = Clock.now().adding(milliseconds: -3 * 86_400_000)
        for (number, scene) in scenes.enumerated() {
            output.line()
            output.line("\(number + 1). \(scene.title)")
            let session = UUID()
            for step in scene.steps {
                clock = clock.adding(milliseconds: step.pause * 1000 + Int64.random(in: 0..<1000))
                guard var payload = step.payload else {
                    // Only time passes: the screen, read again, shows what the clock changed.
                    output.line("   …    \(step.narration)")
                    output.line("        time     \(clock.iso8601), no new event")
                    let screen = try storeCall { try store.deviceState(at: clock) }
                    output.line("        screen   \(describe(screen.flow))")
                    continue
                }
                if case .signInThrottled(let method, _, _) = payload {
                    // The retry time comes from the lockout engine, as an app would do it.
                    let decision = try storeCall { try store.signInDecision(user: step.user, at: clock) }
                    guard case .locked(let lock) = decision else { continue }
                    payload = .signInThrottled(method: method, retryAfter: lock.until)
                }
                let event = Event(id: UUID(), device: device, at: clock, user: step.user, flow: session, payload: payload)
                let result = try storeCall { try store.appendBlocking([event])[0] }
                output.line("   #\(result.seq)  \(step.narration)")
                let fields = EventText.details(event)
                output.line("        event    \(event.type.rawValue)\(fields.isEmpty ? "" : "  " + fields)")
                let screen = try storeCall { try store.deviceState(at: clock) }
                output.line("        screen   \(describe(screen.flow))")
                if case .signInOptionsShown = payload, let shown = screen.signInOptions {
                    for line in SessionCommand.optionsLines(shown) { output.line("        \(line.trimmingCharacters(in: .whitespaces))") }
                }
                if let user = step.user {
                    let decision = try storeCall { try store.signInDecision(user: user, at: clock) }
                    output.line("        lockout  \(describe(decision))")
                }
            }
        }
        output.line()
        output.line("\(scenes.count + 1). The shared device's \"Switch or Add User\" screen")
        let users = try storeCall { try store.users(at: clock) }
        for section in users.sections {
            output.line("   \(section.title)")
            for row in section.rows {
                let picture = row.profile.imageRef == nil ? "(\(row.profile.initials))" : "[photo]"
                output.line("     \(row.isSelected ? "▸" : " ") \(picture) \(row.profile.displayName) — \(row.profile.subtitle ?? "")")
            }
        }
        let found = try storeCall { try store.users(at: clock, search: "jose") }
        let names = found.sections.last?.rows.map { $0.profile.displayName } ?? []
        output.line("   search \"jose\" finds: \(names.joined(separator: ", "))")
        try syncToLoopbackServer(store, output: &output)
        let report = try storeCall { try store.verify() }
        let stats = try storeCall { try store.stats() }
        output.line()
        output.line("The log: \(stats.eventCount) events, \(stats.userCount) users, head seq \(stats.headSeq)")
        output.line("hash chain: \(report.isValid ? "intact" : "BROKEN") (head \(stats.headHash.hex.prefix(16))…)")
        if let signed = report.signedHeadSeq {
            output.line("signed heads: \(report.signedHeadCount), valid through seq \(signed) (Ed25519; the server checked each batch's)")
        }
        output.line("no password, passcode, code, token or CAPTCHA answer appears anywhere in it.")
        output.line()
        output.line("Explore it:")
        output.line("  onboard log --store \(path)")
        output.line("  onboard export --store \(path) --format csv")
        output.line("  onboard verify --store \(path)")
        output.line("  onboard export --store \(path) --format ocsf   # sign-in events for a SIEM")
        output.line("  onboard audit --data \(path)-server             # the server's copy against the signed heads")
        output.line("  onboard forget-user maria.k --store \(path)      # erase a user: name and profile read as erased, verify still passes")
        output.line("  onboard forget-user maria.k --data \(path)-server   # the server's forget: every replica, then the device at its next sync")
        output.line("  onboard serve --data \(path)-server --port 8080   # the server the demo synced to")
        output.flush()
        return ExitCode.success
    }
}
