import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// The multi-user projection's parts: initials in any script, the search, the default selection
/// and the profile updates.
@Suite("Multi-user list")
struct UserListTests {
    static let device = "kiosk-7"

    @Test(
        "initials: first letter of the first and last word, uppercased",
        arguments: [
            ("Alice Martin", "AM"),
            ("alice", "A"),
            ("Alice van der Berg", "AB"),
            ("  alice \t  martin  ", "AM"),
            ("Jean-Luc Picard", "JP"),
            ("élodie durand", "ÉD"),
            ("José Álvarez", "JÁ"),
            ("анна каренина", "АК"),
            ("محمد علي", "مع"),
            ("山田太郎", "山"),
            ("山田 太郎", "山太"),
            ("김민준", "김"),
            ("🎉 Zoë Saldaña", "ZS"),
            ("😀Anna", "A"),
            ("Ann 🚀", "A"),
            ("R2 D2", "RD"),
            ("007", "?"),
            ("😀", "?"),
            ("", "?"),
            ("   ", "?")
        ])
    func initials(name: String, expected: String) {
        #expect(UserProfile.initials(of: name) == expected)
    }

    static func profile(_ id: String, _ name: String, _ subtitle: String?) -> UserProfile {
        UserProfile(
            id: id, displayName: name, subtitle: subtitle, imageRef: nil, initials: UserProfile.initials(of: name),
            passcodePolicy: .numeric, passcodeMinimumLength: 4, hasPasscode: false, biometric: nil, lastSignIn: nil,
            addedAt: FlowTime.at("10:00:00"))
    }

    static let people = [
        profile("jose", "José Álvarez", "Night shift"),
        profile("asa", "åsa lind", "Pharmacy"),
        profile("chloe", "Chloé Dubois", "Front desk"),
        profile("noor", "نور حسن", nil)
    ]

    @Test(
        "search ignores case and diacritics, matches name or subtitle, every word",
        arguments: [
            ("jose", ["jose"]),
            ("JOSÉ", ["jose"]),
            ("alvarez", ["jose"]),
            ("ÅSA", ["asa"]),
            ("Asa", ["asa"]),
            ("pharm", ["asa"]),
            ("DESK", ["chloe"]),
            ("chloe front", ["chloe"]),
            ("chloe night", []),
            ("نور", ["noor"]),
            ("zzz", []),
            ("", ["jose", "asa", "chloe", "noor"]),
            ("  \t ", ["jose", "asa", "chloe", "noor"])
        ])
    func search(query: String, expected: [String]) {
        let search = UserSearch(query)
        #expect(Self.people.filter(search.matches).map(\.id) == expected)
    }

    @Test("a nil search matches everyone")
    func nilSearch() {
        #expect(Self.people.allSatisfy(UserSearch(nil).matches))
    }

    static func added(_ name: String) -> Payload {
        .userAdded(displayName: name, subtitle: nil, imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 4)
    }

    @Test("the selection defaults to the previous user: the last to sign in, else the last added")
    func defaultSelection() {
        var script = FlowScript(policy: .localPasscode, device: Self.device)
        func selected() -> String? { script.state.users.devices[Self.device]?.selected }
        #expect(selected() == nil)
        #expect(script.users() == UsersView(device: Self.device, selected: nil, sections: [.flowAll([])]))
        script.record(Self.added("Ann"), user: "ann", at: "10:00:00")
        script.record(Self.added("Ben"), user: "ben", at: "10:01:00")
        script.record(Self.added("Cai"), user: "cai", at: "10:02:00")
        #expect(selected() == "cai")
        script.record(.signInSucceeded(method: .passcode, secondFactor: false), user: "ben", at: "10:03:00")
        #expect(selected() == "ben")
        // Adding someone does not take the selection from the previous user.
        script.record(Self.added("Dee"), user: "dee", at: "10:04:00")
        #expect(selected() == "ben")
        script.record(.userSelected, user: "cai", at: "10:05:00")
        #expect(selected() == "cai")
        // A sign-in makes that user the current one.
        script.record(.signInSucceeded(method: .passcode, secondFactor: false), user: "ann", at: "10:06:00")
        #expect(selected() == "ann")
        // The selected user leaves: back to the default, the last to sign in among those left.
        script.record(.userRemoved(reason: .userRequest), user: "ann", at: "10:07:00")
        #expect(selected() == "ben")
        script.record(.userRemoved(reason: .admin), user: "ben", at: "10:08:00")
        #expect(selected() == "dee")
        // Selecting someone not on the device changes nothing.
        script.record(.userSelected, user: "ghost", at: "10:09:00")
        #expect(selected() == "dee")
        script.record(.userRemoved(reason: .admin), user: "dee", at: "10:10:00")
        script.record(.userRemoved(reason: .admin), user: "cai", at: "10:11:00")
        #expect(selected() == nil)
        #expect(script.state.users.devices[Self.device]?.users == [])
    }

    @Test("profile updates change the given fields and the initials; other devices are separate")
    func profileUpdates() {
        var script = FlowScript(policy: .localPasscode, device: Self.device)
        script.record(
            .userAdded(
                displayName: "Ann Lee", subtitle: "Ward 3", imageRef: nil, passcodePolicy: .alphanumeric,
                passcodeMinLength: 6), user: "ann", at: "10:00:00")
        script.record(.userProfileUpdated(displayName: "Ann Okafor", subtitle: nil, imageRef: "ann.png"), user: "ann", at: "10:01:00")
        script.record(.biometricEnabled(kind: .fingerprint), user: "ann", at: "10:02:00")
        script.record(.passcodeResetStarted, user: "ann", at: "10:03:00")
        // Events for users not on this device, and on another device, change nothing here.
        script.record(.passcodeSet, user: "zed", at: "10:04:00")
        script.record(Self.added("Ann Other"), user: "ann", at: "10:05:00", device: "kiosk-8")
        #expect(
            script.state.users.devices[Self.device]?.users == [
                UserProfile(
                    id: "ann", displayName: "Ann Okafor", subtitle: "Ward 3", imageRef: "ann.png", initials: "AO",
                    passcodePolicy: .alphanumeric, passcodeMinimumLength: 6, hasPasscode: false, biometric: .fingerprint,
                    lastSignIn: nil, addedAt: FlowTime.at("10:00:00"))
            ])
        script.record(.biometricDisabled, user: "ann", at: "10:06:00")
        script.record(.passcodeChanged, user: "ann", at: "10:07:00")
        // Re-onboarding a listed user updates them in place.
        script.record(
            .userAdded(displayName: "Ann O.", subtitle: "Ward 4", imageRef: nil, passcodePolicy: .numeric, passcodeMinLength: 4),
            user: "ann", at: "10:08:00")
        #expect(
            script.state.users.devices[Self.device]?.users == [
                UserProfile(
                    id: "ann", displayName: "Ann O.", subtitle: "Ward 4", imageRef: nil, initials: "AO",
                    passcodePolicy: .numeric, passcodeMinimumLength: 4, hasPasscode: true, biometric: nil,
                    lastSignIn: nil, addedAt: FlowTime.at("10:00:00"))
            ])
        #expect(script.state.users.devices["kiosk-8"]?.users.map(\.displayName) == ["Ann Other"])
    }

    @Test("the lock state of each row is asked at the time given")
    func rowLockoutAtTime() {
        var script = FlowScript(policy: .mediawiki, device: Self.device)
        script.record(Self.added("Ann"), user: "ann", at: "10:00:00")
        for second in 1...5 {
            script.record(.signInFailed(method: .passcode, reason: .invalidPasscode), user: "ann", at: "10:00:0\(second)")
        }
        let engine = script.state.lockout
        let locked = script.state.users.view(device: Self.device, lockout: engine, at: FlowTime.at("10:05:00.999"))
        #expect(locked.selected?.lockout.isAllowed == false)
        // The row's message names the time left then: the lock runs to 10:05:01.
        #expect(locked.selected?.lockout.message == "You have made too many recent login attempts. Please wait 1 second before trying again.")
        let early = script.state.users.view(device: Self.device, lockout: engine, at: FlowTime.at("10:00:05"))
        #expect(early.selected?.lockout.message == "You have made too many recent login attempts. Please wait 5 minutes before trying again.")
        let free = script.state.users.view(device: Self.device, lockout: engine, at: FlowTime.at("10:05:01"))
        #expect(free.selected?.lockout == .allowed(failures: 5))
    }

    @Test("\"Sign In\" is enabled only for a passcode the policy accepts")
    func signInButton() {
        var numeric = Self.profile("ann", "Ann", nil)
        numeric.passcodeMinimumLength = 4
        #expect(!numeric.canSubmit(passcode: ""))
        #expect(!numeric.canSubmit(passcode: "123"))
        #expect(numeric.canSubmit(passcode: "1234"))
        #expect(!numeric.canSubmit(passcode: "12a4"))
        #expect(!numeric.canSubmit(passcode: "١٢٣٤")) // Arabic-Indic digits are not on a numeric keypad
        var alphanumeric = numeric
        alphanumeric.passcodePolicy = .alphanumeric
        #expect(alphanumeric.canSubmit(passcode: "ab12"))
        #expect(!alphanumeric.canSubmit(passcode: "ab 12"))
        #expect(!alphanumeric.canSubmit(passcode: "ab!2"))
    }
}
