import Foundation
import OnboardingModel
import OnboardingProjections

/// How the server's user search (`GET /v1/users?search=`) reads names, on every storage: a
/// user id or display name is case- and diacritic-folded (as the device's own user search
/// folds, ``UserSearch/fold(_:)``) and split into words at every character that is not a letter
/// or a digit; the server keeps, per word, keyed MACs of its first 1…``maximumPrefixCharacters``
/// characters, never the word. A search matches a user when each of its words is a prefix of a
/// word of the user's id or latest display name: `jose` finds "José", `alv` finds "José
/// Álvarez", `jose alv` both at once.
///
/// ```swift
/// SearchTerms.words("José Álvarez")               // ["jose", "alvarez"]
/// SearchTerms.matches(["alv"], words: ["jose", "alvarez"])   // true
/// ```
enum SearchTerms {
    /// 16 characters of a word are indexed: a longer search word is looked up by its first 16
    /// and then checked against the sealed name itself, so any length matches exactly.
    static let maximumPrefixCharacters = 16
    /// 32 words of a name are indexed (a display name is at most 1 KiB); a name of more words is
    /// found by its first 32.
    static let maximumWordsPerName = 32

    /// The folded words of `text`, in order, at most ``maximumWordsPerName``.
    static func words(_ text: String) -> [String] {
        let folded = UserSearch.fold(text)
        var words: [String] = []
        var current = ""
        for character in folded {
            if character.isLetter || character.isNumber {
                current.append(character)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
            if words.count == maximumWordsPerName { return words }
        }
        if !current.isEmpty { words.append(current) }
        return Array(words.prefix(maximumWordsPerName))
    }

    /// The prefixes of `word` the index holds: its first 1…16 characters.
    static func prefixes(of word: String) -> [String] {
        var result: [String] = []
        var prefix = ""
        for character in word.prefix(maximumPrefixCharacters) {
            prefix.append(character)
            result.append(prefix)
        }
        return result
    }

    /// Every prefix MAC of a user's id and display name, without repeats.
    static func macs(user: String, displayName: String?, key: SecretKey) -> Set<UserRef> {
        var macs = Set<UserRef>()
        for word in words(user) + (displayName.map(words) ?? []) {
            for prefix in prefixes(of: word) { macs.insert(mac(prefix, key: key)) }
        }
        return macs
    }

    /// The keyed BLAKE2b-128 of a folded prefix (domain-separated from a user id's hash under
    /// the same kind of key).
    static func mac(_ prefix: String, key: SecretKey) -> UserRef { UserRef(user: "prefix\u{0}" + prefix, pseudonymKey: key) }

    /// The MAC a search word is looked up by: that of its first 16 characters.
    static func lookupMAC(_ word: String, key: SecretKey) -> UserRef { mac(String(word.prefix(maximumPrefixCharacters)), key: key) }

    /// Whether every search word is a prefix of one of `words`.
    static func matches(_ search: [String], words: [String]) -> Bool {
        search.allSatisfy { term in words.contains { $0.hasPrefix(term) } }
    }

    /// A user id and display name as one byte string, to seal: `u16` length of the id's UTF-8,
    /// the id, the display name's UTF-8 (empty for none).
    static func nameBytes(user: String, displayName: String?) -> [UInt8] {
        let id = Array(user.utf8)
        return [UInt8(id.count >> 8), UInt8(id.count & 0xFF)] + id + Array((displayName ?? "").utf8)
    }

    /// ``nameBytes(user:displayName:)`` read back.
    static func name(from bytes: [UInt8]) -> (user: String, displayName: String?)? {
        guard bytes.count >= 2 else { return nil }
        let length = Int(bytes[0]) << 8 | Int(bytes[1])
        guard length > 0, bytes.count >= 2 + length, let user = String(validating: bytes[2..<(2 + length)], as: UTF8.self),
            let name = String(validating: bytes[(2 + length)...], as: UTF8.self)
        else { return nil }
        return (user, name.isEmpty ? nil : name)
    }

    /// Byte order of user ids (the order `GET /v1/users` lists them in, on every storage).
    static func precedes(_ left: String, _ right: String) -> Bool { left.utf8.lexicographicallyPrecedes(right.utf8) }
}

/// One user a search found.
public struct UserMatch: Sendable, Hashable {
    public var user: String
    public var displayName: String?
    /// Devices whose logs hold records that read as the user.
    public var devices: Int

    /// `{"user","display_name","devices"}`.
    var jsonValue: JSONValue {
        .object([
            .init("user", .string(user)), .init("display_name", displayName.map { .string($0) } ?? .null),
            .init("devices", .number(String(devices)))
        ])
    }
}
