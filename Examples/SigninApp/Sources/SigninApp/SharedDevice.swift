import Foundation
import OnboardingStore

/// The ward iPad's story, as the app's screens would record it: two people set up, José signs in
/// with his passcode after one mistake (the sign-in syncs), then someone guesses Alice's password
/// until the lockout refuses to check it.
struct SharedDevice {
    let store: OnboardingStore

    func run(updates: UpdateLog) async throws {
        try await store.record(
            .userAdded(
                displayName: "Alice Martin", subtitle: "Charge Nurse",
                passcodePolicy: .numeric, passcodeMinLength: 6), user: "alice")
        try await store.record(.passcodeSet, user: "alice")
        try await store.record(
            .userAdded(
                displayName: "José Álvarez", subtitle: "Physician", imageRef: "avatars/jose.png",
                passcodePolicy: .alphanumeric, passcodeMinLength: 8), user: "jose")
        try await store.record(.passcodeSet, user: "jose")

        // "Switch or Add User": the search folds case and diacritics, as the list shows names.
        // "All" lists every match; "Selected" repeats the selected user when it matches too.
        let list = try store.users(search: "jose")
        let found = (list.sections.first { $0.title == UsersView.allTitle }?.rows ?? []).map(\.profile)
        try check(found.map(\.id) == ["jose"], "searching \"jose\" should find José alone, found \(found.map(\.displayName))")
        print("users: \"jose\" finds \(found[0].displayName) (\(found[0].initials))")

        try await joseSignsIn(updates: updates)
        try await someoneGuessesAlicesPassword()
    }

    /// José picks himself, mistypes his passcode once, then signs in: the agent syncs.
    private func joseSignsIn(updates: UpdateLog) async throws {
        let flow = UUID()
        var outcome = try await store.record(.userSelected, user: "jose", flow: flow)
        try check(outcome.flow.screen == .signIn && !outcome.flow.submitEnabled, "a selected user's empty passcode field should disable Sign In")
        outcome = try await store.record(.fieldEdited(field: .passcode, filled: true, valid: true), user: "jose", flow: flow)
        print("José: \(outcome.flow.screen) (\(outcome.flow.state)), Sign In \(outcome.flow.submitEnabled ? "enabled" : "disabled")")

        for succeeds in [false, true] {
            guard case .allowed(let failures) = try store.signInDecision(user: "jose") else {
                throw Failure(description: "José should be allowed to try")
            }
            print("José: may try (\(failures) counted failures)")
            try await store.record(.signInStarted(method: .passcode), user: "jose", flow: flow)
            if succeeds {
                outcome = try await store.record(.signInSucceeded(method: .passcode, secondFactor: false), user: "jose", flow: flow)
            } else {
                outcome = try await store.record(.signInFailed(method: .passcode, reason: .invalidPasscode), user: "jose", flow: flow)
                let messages = outcome.flow.fieldMessages.map { "\($0.field): \($0.text)" }
                print("José: \(outcome.flow.screen) (\(outcome.flow.state)) · \(messages.joined(separator: " · "))")
            }
        }
        try check(outcome.state.signedIn?.user == "jose", "José should be signed in")
        print("José: signed in")
        // sign_in_succeeded starts a sync at once.
        try check(await updates.waitForRuns(1, timeout: .seconds(30)), "the sign-in should have synced within 30 s")
        try await store.record(.signedOut(reason: .user), user: "jose")
    }

    /// Five wrong passwords for Alice in a minute: the sixth try is refused before any check.
    private func someoneGuessesAlicesPassword() async throws {
        let flow = UUID()
        try await store.record(.fieldEdited(field: .password, filled: true), user: "alice", flow: flow)
        for attempt in 1...6 {
            switch try store.signInDecision(user: "alice") {
            case .allowed:
                let outcome = try await store.record(.signInFailed(method: .password, reason: .invalidPassword), user: "alice", flow: flow)
                print("alice, guess \(attempt): \(outcome.flow.screen) (\(outcome.flow.state))")
            case .locked(let lock):
                try check(attempt == 6, "the lock should come after the fifth failure, not before guess \(attempt)")
                try await store.record(.signInThrottled(method: .password, retryAfter: lock.until), user: "alice", flow: flow)
                print("alice, guess \(attempt): refused — \(lock.message)")
            case .permanentlyLocked:
                throw Failure(description: "the default policy never locks for good")
            }
        }
        try check(!(try store.signInDecision(user: "alice").isAllowed), "alice should be locked after five failures")
    }
}
