import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The screen × state matrix of docs/projections.md, walked cell by cell: every applicable cell
/// is reached from a new device by the events the table names, and the whole session is compared
/// with what the table says it shows. The table itself is read too, so the document and the fold
/// cannot drift apart: the same cells, the same texts, the same submit button.
@Suite("The screen × state matrix: every cell of docs/projections.md")
struct ScreenStateMatrixTests {
    static let device = "phone-1"
    static let flowID = FlowID.make(1)

    /// One walk: events from a new device, then the device's whole session.
    struct Walk: Sendable, CustomTestStringConvertible {
        var screen: Screen
        var state: ScreenState
        /// For the error table: which error of the brief (empty for the matrix's own cells).
        var error: String = ""
        var policy: LockoutPolicy = .mediawiki
        var steps: [(Payload, String?)]
        var expected: DeviceState

        var testDescription: String { "\(screen.rawValue) × \(state.rawValue)\(error.isEmpty ? "" : " (\(error))")" }

        /// Records the steps one second apart from 16:00:00 and returns the device's session.
        func run() -> DeviceState {
            var script = FlowScript(policy: policy, device: ScreenStateMatrixTests.device, session: ScreenStateMatrixTests.flowID)
            for (index, (payload, user)) in steps.enumerated() {
                script.record(payload, user: user, at: String(format: "16:00:%02d", index))
            }
            return script.deviceSession
        }

        /// Every text the session shows: field messages, the system message, the resend help.
        var texts: Set<String> {
            let flow = expected.flow
            return Set(flow.fieldMessages.map(\.text) + [flow.systemMessage?.text, flow.resend?.help].compactMap { $0 })
        }
    }

    static func session(_ flow: Flow, signedIn: SignedInUser? = nil) -> DeviceState {
        DeviceState(device: device, signedIn: signedIn, flow: flow)
    }

    static func flow(
        _ screen: Screen, _ state: ScreenState, user: String? = nil, fieldMessages: [FieldMessage] = [],
        system: Message? = nil, resend: ResendInfo? = nil, lockedUntil: Timestamp? = nil,
        fields: [FieldInput] = [], identifierKind: IdentifierKind? = nil
    ) -> Flow {
        Flow(
            id: flowID, user: user, screen: screen, state: state, fieldMessages: fieldMessages, systemMessage: system,
            resend: resend, lockedUntil: lockedUntil, fields: fields, identifierKind: identifierKind)
    }

    static let ann = "ann@example.org"
    static let email = FieldInput(field: .email, filled: true)
    static let password = FieldInput(field: .password, filled: true)
    static let noConnection = Message(SessionText.noConnection, .error)
    static let signingIn: [(Payload, String?)] = [
        (.fieldEdited(field: .email, filled: true, valid: nil), nil),
        (.fieldEdited(field: .password, filled: true, valid: nil), nil),
        (.signInStarted(method: .password, identifierKind: .email), ann)
    ]
    static let resetting: [(Payload, String?)] = [
        (.passwordResetStarted, nil), (.fieldEdited(field: .email, filled: true, valid: nil), nil),
        (.passwordResetRequested(route: .email), nil)
    ]

    /// The applicable cells of the matrix, in the table's order.
    static let cells: [Walk] = [
        Walk(
            screen: .signIn, state: .empty, steps: [(.userSelected, "ann")],
            expected: session(flow(.signIn, .empty, user: "ann"))),
        Walk(
            screen: .signIn, state: .partiallyFilled,
            steps: [(.userSelected, "ann"), (.fieldEdited(field: .passcode, filled: true, valid: false), "ann")],
            expected: session(
                flow(
                    .signIn, .partiallyFilled, user: "ann",
                    fields: [FieldInput(field: .passcode, filled: true, valid: false)]))),
        Walk(
            screen: .signIn, state: .error,
            steps: signingIn + [(.signInFailed(method: .password, reason: .invalidPassword), ann)],
            expected: session(
                flow(
                    .signIn, .error, user: ann,
                    fieldMessages: [FieldMessage(field: "password", "Invalid password", .error)],
                    fields: [email, password], identifierKind: .email))),
        Walk(
            screen: .signIn, state: .loading, steps: signingIn,
            expected: session(flow(.signIn, .loading, user: ann, fields: [email, password], identifierKind: .email))),
        Walk(
            screen: .signIn, state: .success, steps: [(.passcodeResetStarted, "ann"), (.passcodeResetCompleted, "ann")],
            expected: session(
                flow(
                    .signIn, .success, user: "ann",
                    system: Message("Your passcode has been reset. Sign in with your new passcode.", .success)))),

        Walk(
            screen: .secondFactor, state: .empty, steps: [(.secondFactorRequired(method: .totp), ann)],
            expected: session(flow(.secondFactor, .empty, user: ann))),
        Walk(
            screen: .secondFactor, state: .partiallyFilled,
            steps: [(.secondFactorRequired(method: .totp), ann), (.fieldEdited(field: .secondFactorCode, filled: true, valid: nil), ann)],
            expected: session(
                flow(
                    .secondFactor, .partiallyFilled, user: ann,
                    fields: [FieldInput(field: .secondFactorCode, filled: true)]))),
        Walk(
            screen: .secondFactor, state: .error,
            steps: [(.secondFactorRequired(method: .totp), ann), (.secondFactorFailed(method: .totp), ann)],
            expected: session(
                flow(
                    .secondFactor, .error, user: ann,
                    fieldMessages: [FieldMessage(field: "second_factor_code", "Verification failed", .error)]))),
        Walk(
            screen: .secondFactor, state: .loading,
            steps: [
                (.secondFactorRequired(method: .totp), ann), (.fieldEdited(field: .secondFactorCode, filled: true, valid: nil), ann),
                (.signInStarted(method: .password), ann)
            ],
            expected: session(
                flow(
                    .secondFactor, .loading, user: ann,
                    fields: [FieldInput(field: .secondFactorCode, filled: true)]))),
        Walk(
            screen: .secondFactor, state: .success,
            steps: [
                (.secondFactorRequired(method: .totp), ann), (.fieldEdited(field: .secondFactorCode, filled: true, valid: nil), ann),
                (.secondFactorSucceeded(method: .totp), ann)
            ],
            expected: session(flow(.secondFactor, .success, user: ann, fields: [FieldInput(field: .secondFactorCode, filled: true)]))),

        Walk(
            screen: .captcha, state: .empty, steps: [(.captchaPresented(purpose: .signIn), nil)],
            expected: session(flow(.captcha, .empty))),
        Walk(
            screen: .captcha, state: .partiallyFilled,
            steps: [(.captchaPresented(purpose: .signIn), nil), (.fieldEdited(field: .captcha, filled: true, valid: nil), nil)],
            expected: session(flow(.captcha, .partiallyFilled, fields: [FieldInput(field: .captcha, filled: true)]))),
        Walk(
            screen: .captcha, state: .error, steps: [(.captchaPresented(purpose: .signIn), nil), (.captchaFailed, nil)],
            expected: session(
                flow(
                    .captcha, .error,
                    fieldMessages: [FieldMessage(field: "captcha", "Wrong code. Please try again.", .error)]))),

        Walk(
            screen: .createAccount, state: .empty, steps: [(.accountCreationStarted, nil)],
            expected: session(flow(.createAccount, .empty))),
        Walk(
            screen: .createAccount, state: .partiallyFilled,
            steps: [(.accountCreationStarted, nil), (.fieldEdited(field: .email, filled: true, valid: nil), nil)],
            expected: session(flow(.createAccount, .partiallyFilled, fields: [email], identifierKind: .email))),
        Walk(
            screen: .createAccount, state: .error,
            steps: [
                (.accountCreationStarted, nil), (.fieldEdited(field: .email, filled: true, valid: nil), nil),
                (.fieldValidated(field: .email, result: .emailInUse), nil)
            ],
            expected: session(
                flow(
                    .createAccount, .error,
                    fieldMessages: [FieldMessage(field: "email", "Email already in use", .error)],
                    fields: [email], identifierKind: .email))),
        Walk(
            screen: .createAccount, state: .loading,
            steps: [
                (.accountCreationStarted, nil), (.fieldEdited(field: .email, filled: true, valid: nil), nil),
                (.fieldEdited(field: .password, filled: true, valid: nil), nil), (.accountCreationSubmitted, nil)
            ],
            expected: session(flow(.createAccount, .loading, fields: [email, password], identifierKind: .email))),
        Walk(
            screen: .createAccount, state: .success,
            steps: [(.accountCreationStarted, nil), (.accountCreationSubmitted, nil), (.accountCreated, "new@example.org")],
            expected: session(
                flow(
                    .createAccount, .success, user: "new@example.org",
                    system: Message("Your account has been created.", .success)))),

        Walk(
            screen: .forgotPassword, state: .empty, steps: [(.passwordResetStarted, nil)],
            expected: session(flow(.forgotPassword, .empty))),
        Walk(
            screen: .forgotPassword, state: .partiallyFilled,
            steps: [(.passwordResetStarted, nil), (.fieldEdited(field: .email, filled: true, valid: nil), nil)],
            expected: session(flow(.forgotPassword, .partiallyFilled, fields: [email], identifierKind: .email))),
        Walk(
            screen: .forgotPassword, state: .error,
            steps: resetting + [(.passwordResetFailed(reason: .networkUnavailable), nil)],
            expected: session(flow(.forgotPassword, .error, system: noConnection, fields: [email], identifierKind: .email))),
        Walk(
            screen: .forgotPassword, state: .loading, steps: resetting,
            expected: session(flow(.forgotPassword, .loading, fields: [email], identifierKind: .email))),

        Walk(
            screen: .forgotPasscode, state: .empty, steps: [(.userSelected, "ann"), (.passcodeResetStarted, "ann")],
            expected: session(flow(.forgotPasscode, .empty, user: "ann"))),
        Walk(
            screen: .forgotPasscode, state: .partiallyFilled,
            steps: [(.passcodeResetStarted, "ann"), (.fieldEdited(field: .passcode, filled: true, valid: true), "ann")],
            expected: session(flow(.forgotPasscode, .partiallyFilled, user: "ann", fields: [FieldInput(field: .passcode, filled: true, valid: true)]))),

        Walk(
            screen: .resetSent, state: .success,
            steps: [(.passwordResetRequested(route: .email), nil), (.temporaryPasswordSent, ann)],
            expected: session(
                flow(
                    .resetSent, .success, user: ann,
                    system: Message("Temporary password sent via email", .success),
                    resend: ResendInfo(
                        availableAt: FlowTime.at("16:01:01"),
                        help: "Didn't get the email? Check your spam folder. You can send it again when the timer ends."),
                    identifierKind: .email))),
        Walk(
            screen: .switchUser, state: .empty, steps: [(.userSelected, "ann"), (.userSwitchOpened, "ann")],
            expected: session(flow(.switchUser, .empty, user: "ann"))),
        Walk(
            screen: .switchUser, state: .success,
            steps: [(.userAdded(displayName: "Ann Lee", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 6), "ann")],
            expected: session(flow(.switchUser, .success, user: "ann"))),
        Walk(
            screen: .signedIn, state: .success, steps: [(.signInSucceeded(method: .password, secondFactor: false), ann)],
            expected: session(
                flow(.signedIn, .success, user: ann),
                signedIn: SignedInUser(user: ann, since: FlowTime.at("16:00:00"), method: .password, secondFactor: false))),
        Walk(
            screen: .lockedOut, state: .error,
            steps: Array(repeating: (.signInFailed(method: .password, reason: .invalidPassword), ann), count: 5),
            expected: session(
                flow(
                    .lockedOut, .error, user: ann,
                    system: Message("You have made too many recent login attempts. Please wait 5 minutes before trying again.", .error),
                    lockedUntil: FlowTime.at("16:05:00")
                ).withUnlockScreen(.signIn)))
    ]

    /// The brief's errors on every screen where they apply (the matrix's second table).
    static let errors: [Walk] = [
        Walk(
            screen: .signIn, state: .error, error: "wrong password",
            steps: [(.signInFailed(method: .password, reason: .invalidPassword), ann)],
            expected: session(flow(.signIn, .error, user: ann, fieldMessages: [FieldMessage(field: "password", "Invalid password", .error)]))),
        Walk(
            screen: .signIn, state: .error, error: "wrong passcode",
            steps: [(.signInFailed(method: .passcode, reason: .invalidPasscode), "ann")],
            expected: session(flow(.signIn, .error, user: "ann", fieldMessages: [FieldMessage(field: "passcode", "Invalid passcode", .error)]))),
        Walk(
            screen: .signIn, state: .error, error: "no account",
            steps: [
                (.signInStarted(method: .password, identifierKind: .email), ann),
                (.signInFailed(method: .password, reason: .unknownUser), ann)
            ],
            expected: session(
                flow(
                    .signIn, .error, user: ann,
                    fieldMessages: [FieldMessage(field: "email", SessionText.unknownEmail, .error)],
                    identifierKind: .email))),
        Walk(
            screen: .createAccount, state: .error, error: "email taken",
            steps: [
                (.accountCreationStarted, nil), (.accountCreationSubmitted, nil),
                (.accountCreationFailed(field: nil, reason: .emailInUse), nil)
            ],
            expected: session(flow(.createAccount, .error, fieldMessages: [FieldMessage(field: "email", "Email already in use", .error)]))),
        Walk(
            screen: .createAccount, state: .error, error: "email invalid",
            steps: [(.accountCreationStarted, nil), (.fieldValidated(field: .email, result: .emailInvalid), nil)],
            expected: session(flow(.createAccount, .error, fieldMessages: [FieldMessage(field: "email", SessionText.emailInvalid, .error)]))),
        Walk(
            screen: .createAccount, state: .error, error: "phone invalid",
            steps: [(.accountCreationStarted, nil), (.fieldValidated(field: .phone, result: .phoneInvalid), nil)],
            expected: session(flow(.createAccount, .error, fieldMessages: [FieldMessage(field: "phone", SessionText.phoneInvalid, .error)]))),
        Walk(
            screen: .signIn, state: .error, error: "no network",
            steps: [(.signInStarted(method: .password), ann), (.signInFailed(method: .password, reason: .networkUnavailable), ann)],
            expected: session(flow(.signIn, .error, user: ann, system: noConnection))),
        Walk(
            screen: .createAccount, state: .error, error: "no network",
            steps: [
                (.accountCreationStarted, nil), (.accountCreationSubmitted, nil),
                (.accountCreationFailed(field: nil, reason: .networkUnavailable), nil)
            ],
            expected: session(flow(.createAccount, .error, system: noConnection))),
        Walk(
            screen: .forgotPassword, state: .error, error: "no network",
            steps: [(.passwordResetRequested(route: .email), nil), (.passwordResetFailed(reason: .networkUnavailable), nil)],
            expected: session(flow(.forgotPassword, .error, system: noConnection, identifierKind: .email))),
        Walk(
            screen: .forgotPassword, state: .error, error: "unknown account",
            steps: [(.passwordResetRequested(route: .email), nil), (.passwordResetFailed(reason: .unknownAccount), nil)],
            expected: session(
                flow(
                    .forgotPassword, .error, fieldMessages: [FieldMessage(field: "email", SessionText.unknownEmail, .error)],
                    identifierKind: .email))),
        Walk(
            screen: .forgotPassword, state: .error, error: "too many requests",
            steps: [(.passwordResetRequested(route: .username), nil), (.passwordResetFailed(reason: .rateLimited), nil)],
            expected: session(
                flow(
                    .forgotPassword, .error, system: Message(SessionText.tooManyResetRequests, .error),
                    identifierKind: .username))),
        Walk(
            screen: .signIn, state: .error, error: "server error",
            steps: [(.signInFailed(method: .password, reason: .serverError), ann)],
            expected: session(flow(.signIn, .error, user: ann, system: Message(SessionText.serverError, .error)))),
        Walk(
            screen: .createAccount, state: .error, error: "server error",
            steps: [(.accountCreationFailed(field: nil, reason: .serverError), nil)],
            expected: session(flow(.createAccount, .error, system: Message(SessionText.serverError, .error)))),
        Walk(
            screen: .forgotPassword, state: .error, error: "server error",
            steps: [(.passwordResetFailed(reason: .serverError), nil)],
            expected: session(flow(.forgotPassword, .error, system: Message(SessionText.serverError, .error))))
    ]

    @Test("every applicable cell is reached by its events and shows exactly what the table says", arguments: cells)
    func cell(_ walk: Walk) {
        #expect(walk.run() == walk.expected)
    }

    @Test("the brief's errors are reachable on every screen where they apply", arguments: errors)
    func error(_ walk: Walk) {
        #expect(walk.run() == walk.expected)
    }

    @Test("\"Sign In\" on a shared device: disabled until the passcode is filled and valid under the user's policy")
    func signInButtonFollowsThePasscode() {
        var script = FlowScript(policy: .localPasscode, device: Self.device, session: Self.flowID)
        script.record(
            .userAdded(displayName: "Ann Lee", subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 6),
            user: "ann", at: "16:00:00")
        script.record(.userSelected, user: "ann", at: "16:00:01")
        #expect(!script.deviceSession.flow.submitEnabled)
        // Three digits of six: filled, but not yet valid under a numeric policy of length 6.
        script.record(.fieldEdited(field: .passcode, filled: true, valid: false), user: "ann", at: "16:00:02")
        #expect(script.deviceSession.flow.state == .partiallyFilled && !script.deviceSession.flow.submitEnabled)
        script.record(.fieldEdited(field: .passcode, filled: true, valid: true), user: "ann", at: "16:00:03")
        #expect(script.deviceSession.flow.state == .partiallyFilled && script.deviceSession.flow.submitEnabled)
        script.record(.signInStarted(method: .passcode), user: "ann", at: "16:00:04")
        #expect(script.deviceSession.flow.state == .loading && !script.deviceSession.flow.submitEnabled)
        // Wrong passcode: the app clears the field; the red message stays until Ann types again.
        script.record(.signInFailed(method: .passcode, reason: .invalidPasscode), user: "ann", at: "16:00:05")
        script.record(.fieldEdited(field: .passcode, filled: false, valid: false), user: "ann", at: "16:00:06")
        #expect(
            script.deviceSession.flow
                == Flow(
                    id: Self.flowID, user: "ann", screen: .signIn, state: .error,
                    fieldMessages: [FieldMessage(field: "passcode", "Invalid passcode", .error)],
                    fields: [FieldInput(field: .passcode, filled: false, valid: false)]))
        #expect(!script.deviceSession.flow.submitEnabled)
        script.record(.fieldEdited(field: .passcode, filled: true, valid: true), user: "ann", at: "16:00:07")
        #expect(
            script.deviceSession.flow
                == Flow(
                    id: Self.flowID, user: "ann", screen: .signIn, state: .partiallyFilled,
                    fields: [FieldInput(field: .passcode, filled: true, valid: true)]))
        #expect(script.deviceSession.flow.submitEnabled)
    }

    @Test("the fields survive a detour to \"Forgot password?\" and the CAPTCHA, and go when the form is done")
    func fieldsBelongToTheFlow() {
        var script = FlowScript(device: Self.device, session: Self.flowID)
        script.record(.fieldEdited(field: .email, filled: true, valid: nil), user: nil, at: "16:00:00")
        script.record(.captchaPresented(purpose: .signIn), user: nil, at: "16:00:01")
        #expect(script.deviceSession.flow.state == .empty, "the CAPTCHA's own field is empty")
        script.record(.captchaPassed, user: nil, at: "16:00:02")
        #expect(script.deviceSession.flow.fields == [Self.email])
        script.record(.passwordResetStarted, user: nil, at: "16:00:03")
        #expect(script.deviceSession.flow.screen == .forgotPassword && script.deviceSession.flow.state == .partiallyFilled)
        #expect(script.deviceSession.flow.submitEnabled, "the typed email is there for the reset")
        script.record(.passwordResetRequested(route: .email), user: nil, at: "16:00:04")
        script.record(.temporaryPasswordSent, user: Self.ann, at: "16:00:05")
        #expect(script.deviceSession.flow.fields.isEmpty)
        // Another flow starts clean.
        script.session = FlowID.make(2)
        script.record(.signInStarted(method: .password), user: Self.ann, at: "16:01:00")
        #expect(script.deviceSession.flow.fields.isEmpty && script.deviceSession.flow.identifierKind == nil)
    }

    @Test("the Face ID / Touch ID badge follows the flow's user and biometric sign-in being on")
    func biometricBadge() {
        var script = FlowScript(device: Self.device, session: Self.flowID)
        script.record(.biometricEnabled(kind: .face), user: "ann", at: "16:00:00")
        script.record(.userSelected, user: "bob", at: "16:00:01")
        #expect(script.deviceSession.flow.biometric == nil)
        script.record(.userSelected, user: "ann", at: "16:00:02")
        #expect(script.deviceSession.flow.biometric == .face)
        script.record(.biometricDisabled, user: "ann", at: "16:00:03")
        #expect(script.deviceSession.flow.biometric == nil)
        script.record(.biometricEnabled(kind: .touch), user: "ann", at: "16:00:04")
        #expect(script.deviceSession.flow.biometric == .touch)
        // Another device: its own setting.
        script.record(.userSelected, user: "ann", at: "16:00:05", device: "phone-2")
        #expect(script.state.session.session(device: "phone-2").flow.biometric == nil)
        script.record(.userRemoved(reason: .userRequest), user: "ann", at: "16:00:06")
        #expect(script.deviceSession.flow.biometric == nil)
    }

    // MARK: The document

    /// The rows of the matrix table of docs/projections.md: (screen, state) → (events, shows, submit).
    static func documentedCells() throws -> [String: (events: String, shows: String, submit: String)] {
        let rows = try Self.tableRows(after: "## The screen × state matrix", columns: 5)
        var cells: [String: (String, String, String)] = [:]
        for row in rows { cells["\(row[0]) × \(row[1])"] = (row[2], row[3], row[4]) }
        return cells
    }

    static func tableRows(after heading: String, columns: Int) throws -> [[String]] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/projections.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let section = try #require(text.range(of: heading).map { text[$0.upperBound...] })
        var rows: [[String]] = []
        var inTable = false
        for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("|") else {
                if inTable { break }
                continue
            }
            inTable = true
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == columns, !cells[0].hasPrefix("---"), cells[0] != "screen", cells[0] != "error" else { continue }
            rows.append(cells)
        }
        return rows
    }

    /// The quoted texts of a "shows" cell.
    static func quotedTexts(_ shows: String) -> Set<String> {
        var texts: Set<String> = []
        var rest = Substring(shows)
        while let open = rest.firstIndex(of: "\""), let close = rest[rest.index(after: open)...].firstIndex(of: "\"") {
            texts.insert(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return texts
    }

    @Test("docs/projections.md lists every screen × state, the same applicable cells, texts and submit buttons")
    func theTableMatchesTheWalks() throws {
        let documented = try Self.documentedCells()
        let all = Screen.allCases.flatMap { screen in ScreenState.allCases.map { "\(screen.rawValue) × \($0.rawValue)" } }
        #expect(Set(documented.keys) == Set(all), "the table has one row per screen and state")
        let applicable = Set(documented.filter { !$0.value.events.hasPrefix("n/a") }.keys)
        #expect(applicable == Set(Self.cells.map { "\($0.screen.rawValue) × \($0.state.rawValue)" }))
        for walk in Self.cells {
            let key = "\(walk.screen.rawValue) × \(walk.state.rawValue)"
            guard let row = documented[key] else { continue }
            #expect(Self.quotedTexts(row.shows) == walk.texts, "\(key): the texts shown")
            #expect(row.submit == (walk.expected.flow.submitEnabled ? "enabled" : "disabled"), "\(key): the submit button")
            // The events column names the walk's event types, in order.
            let named = row.events.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
            let types = walk.steps.map(\.0.type.rawValue)
            #expect(named.allSatisfy(types.contains), "\(key): \(named) are all among \(types)")
        }
        // The error table: each row's screens and text are those of a walk.
        let errorRows = try Self.tableRows(after: "The brief's errors, on every screen", columns: 4)
        var documentedErrors: Set<String> = []
        for row in errorRows {
            for screen in row[1].components(separatedBy: ", ") {
                documentedErrors.insert("\(row[0]) on \(screen): \(Self.quotedTexts(row[3]).sorted())")
            }
        }
        #expect(documentedErrors == Set(Self.errors.map { "\($0.error) on \($0.screen.rawValue): \($0.texts.sorted())" }))
    }
}

extension ScreenStateMatrixTests {
    @Test("the flow's field bits round trip every field and flag, and have room for every FormField")
    func fieldBitsRoundTrip() {
        #expect(FormField.allCases.count <= 16, "FieldInputs keeps one bit of a UInt16 per field")
        let all = FormField.allCases.flatMap { field in
            [
                FieldInput(field: field, filled: true, valid: nil), FieldInput(field: field, filled: false, valid: false),
                FieldInput(field: field, filled: true, valid: true)
            ]
        }
        for input in all {
            #expect(FieldInputs([input]).list == [input])
        }
        // The list is sorted by field name; a later report of a field replaces the earlier one.
        let list = FieldInputs([
            FieldInput(field: .username, filled: true), FieldInput(field: .captcha, filled: false),
            FieldInput(field: .username, filled: false, valid: false)
        ]).list
        #expect(list == [FieldInput(field: .captcha, filled: false), FieldInput(field: .username, filled: false, valid: false)])
    }
}
