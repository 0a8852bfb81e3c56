import Foundation
import Testing
@testable import OnboardingModel

@Suite("Event.validate(): limits and character rules")
struct EventValidationTests {
    static func added(
        _ displayName: String = "Ana", subtitle: String? = nil, imageRef: String? = nil,
        minimumLength: Int = 6
    ) -> Payload {
        .userAdded(
            displayName: displayName, subtitle: subtitle, imageRef: imageRef,
            passcodePolicy: .numeric, passcodeMinLength: minimumLength)
    }

    static func refusal(_ event: Event) -> EventValidationError? {
        do {
            try event.validate()
            return nil
        } catch {
            return error
        }
    }

    @Test("the limits are the documented ones")
    func limits() {
        #expect(Limits.maximumDeviceBytes == 64)
        #expect(Limits.maximumUserBytes == 256)
        #expect(Limits.maximumTextBytes == 4096)
        #expect(Limits.maximumJSONLineBytes == 65_536)
    }

    // MARK: Device

    @Test(
        "device ids of 1…64 letters, digits and - _ . : are valid",
        arguments: [
            "k", "kiosk-7", "KIOSK_7", "host.example.org", "00:1B:44:11:3A:B7", "0f8fad5b-d9cb-469f-a165-70867728950e",
            String(repeating: "a", count: 64), "-", "_.:"
        ])
    func validDevices(device: String) throws {
        try Samples.event(.captchaPassed, device: device).validate()
    }

    @Test(
        "other device ids are refused",
        arguments: [
            ("", "must be 1 to 64 bytes long"),
            (String(repeating: "a", count: 65), "must be 1 to 64 bytes long"),
            ("kiosk 7", #"may only contain letters, digits and - _ . : (got "kiosk 7")"#),
            ("kiosk/7", #"may only contain letters, digits and - _ . : (got "kiosk/7")"#),
            ("kiosk@7", #"may only contain letters, digits and - _ . : (got "kiosk@7")"#),
            ("kïosk", #"may only contain letters, digits and - _ . : (got "kïosk")"#),
            ("キオスク", #"may only contain letters, digits and - _ . : (got "キオスク")"#),
            // Echoed escaped: an error message stays one line whatever the input held.
            ("kiosk\n", #"may only contain letters, digits and - _ . : (got "kiosk\n")"#),
            ("kiosk\u{1B}[31m", #"may only contain letters, digits and - _ . : (got "kiosk\u{001B}[31m")"#),
            (String(repeating: "é", count: 33), "must be 1 to 64 bytes long") // 66 bytes
        ])
    func invalidDevices(device: String, message: String) {
        let error = Self.refusal(Samples.event(.captchaPassed, device: device))
        #expect(error?.field == "device")
        #expect(error?.message == message)
    }

    // MARK: User

    @Test("users of 1…256 bytes of any script are valid; null is valid")
    func validUsers() throws {
        for user in [
            "a", "alice@example.org", "CN=Alice,OU=People,DC=example,DC=org", "זינב", "👩🏽‍🚀", "用户",
            String(repeating: "é", count: 128), String(repeating: "x", count: 256), " spaced \u{200F} "
        ] as [String?] + [nil] {
            try Samples.event(.userSelected, user: user).validate()
        }
    }

    @Test(
        "empty, over-long and control-character users are refused",
        arguments: [
            ("", "must be 1 to 256 bytes long (use null when unknown)"),
            (String(repeating: "x", count: 257), "must be 1 to 256 bytes long (use null when unknown)"),
            (String(repeating: "é", count: 128) + "x", "must be 1 to 256 bytes long (use null when unknown)"),
            ("a\tb", "must not contain control characters"),
            ("a\u{0}", "must not contain control characters"),
            ("a\u{7F}", "must not contain control characters"),
            ("a\u{85}", "must not contain control characters")
        ])
    func invalidUsers(user: String, message: String) {
        let error = Self.refusal(Samples.event(.userSelected, user: user))
        #expect(error?.field == "user")
        #expect(error?.message == message)
        #expect(error?.description == "field \"user\": \(message)")
    }

    // MARK: Times

    @Test("at and retry_after must lie in years 0001…9999")
    func timeRange() {
        let message = "time must lie between years 0001 and 9999"
        var event = Samples.event(.captchaPassed)
        for at in [Timestamp.minimum, .maximum, Timestamp(millisecondsSince1970: 0)] {
            event.at = at
            #expect(Self.refusal(event) == nil)
        }
        for at in [
            Timestamp.minimum.adding(milliseconds: -1), Timestamp.maximum.adding(milliseconds: 1),
            Timestamp(millisecondsSince1970: .min), Timestamp(millisecondsSince1970: .max)
        ] {
            event.at = at
            let error = Self.refusal(event)
            #expect(error?.field == "at")
            #expect(error?.message == message)
        }
        for retryAfter in [Timestamp.minimum.adding(milliseconds: -1), Timestamp.maximum.adding(milliseconds: 1)] {
            let error = Self.refusal(Samples.event(.signInThrottled(method: .password, retryAfter: retryAfter)))
            #expect(error?.field == "retry_after")
            #expect(error?.message == message)
        }
        #expect(Self.refusal(Samples.event(.signInThrottled(method: .password, retryAfter: .maximum))) == nil)
    }

    // MARK: Text fields

    @Test("text fields take 1…4096 bytes of UTF-8, counted in bytes not characters")
    func textLength() {
        let emoji4096 = String(repeating: "😀", count: 1024)
        #expect(Self.refusal(Samples.event(Self.added(emoji4096, subtitle: emoji4096, imageRef: emoji4096))) == nil)
        #expect(Self.refusal(Samples.event(Self.added("a"))) == nil)
        let cases: [(Payload, String, Int)] = [
            (Self.added(""), "display_name", 0),
            (Self.added(emoji4096 + "a"), "display_name", 4097),
            (Self.added(subtitle: ""), "subtitle", 0),
            (Self.added(imageRef: String(repeating: "x", count: 4097)), "image_ref", 4097),
            (.userProfileUpdated(displayName: nil, subtitle: nil, imageRef: ""), "image_ref", 0),
            (.userProfileUpdated(displayName: String(repeating: "漢", count: 1366), subtitle: nil, imageRef: nil), "display_name", 4098)
        ]
        for (payload, field, count) in cases {
            let error = Self.refusal(Samples.event(payload))
            #expect(error?.field == field)
            #expect(error?.message == "must be 1 to 4096 bytes of UTF-8, got \(count)")
        }
    }

    @Test(
        "text fields refuse control characters but keep other invisible characters",
        arguments: [
            "line\nbreak", "tab\t", "\r", "nul\u{0}", "bell\u{7}", "esc\u{1B}[0m", "del\u{7F}", "c1\u{85}", "c1\u{9F}"
        ])
    func textControlCharacters(text: String) {
        let error = Self.refusal(Samples.event(Self.added(text)))
        #expect(error?.field == "display_name")
        #expect(error?.message == "must not contain control characters")
    }

    @Test(
        "format characters, separators and marks are not control characters",
        arguments: [
            "\u{200F}rtl", "zero\u{200B}width", "\u{FEFF}bom", "line\u{2028}sep", "para\u{2029}sep", "e\u{301}", "\u{202E}override"
        ])
    func textInvisibleButAllowed(text: String) {
        #expect(Self.refusal(Samples.event(Self.added(text))) == nil)
    }

    // MARK: Counts

    @Test("passcode_min_length must lie in 1…64", arguments: [Int.min, -1, 0, 1, 6, 64, 65, 1000, Int.max])
    func passcodeMinimumLength(length: Int) {
        let error = Self.refusal(Samples.event(Self.added(minimumLength: length)))
        if (1...64).contains(length) {
            #expect(error == nil)
        } else {
            #expect(error?.field == "passcode_min_length")
            #expect(error?.message == "must be between 1 and 64, got \(length)")
        }
    }

    @Test("the first broken rule is reported: device, then user, then at, then payload fields in order")
    func firstBrokenRuleWins() {
        var event = Samples.event(Self.added("", subtitle: "", minimumLength: 0), user: "", device: "")
        event.at = Timestamp(millisecondsSince1970: .max)
        #expect(Self.refusal(event)?.field == "device")
        event.device = "kiosk-7"
        #expect(Self.refusal(event)?.field == "user")
        event.user = nil
        #expect(Self.refusal(event)?.field == "at")
        event.at = Samples.at
        #expect(Self.refusal(event)?.field == "display_name")
        event.payload = Self.added("Ana", subtitle: "", minimumLength: 0)
        #expect(Self.refusal(event)?.field == "subtitle")
        event.payload = Self.added("Ana", subtitle: "ok", minimumLength: 0)
        #expect(Self.refusal(event)?.field == "passcode_min_length")
    }

    @Test("an error without a field describes itself with the message alone")
    func errorDescription() {
        #expect(EventValidationError(field: nil, "bad").description == "bad")
        #expect(EventValidationError(field: "x", "bad").description == "field \"x\": bad")
    }
}
