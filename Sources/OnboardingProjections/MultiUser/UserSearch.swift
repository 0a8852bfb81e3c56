import Foundation

/// The local search of "Switch or Add User" (`onboard users --search`, docs/projections.md §
/// `onboard users --json`): a user matches when every word of the query occurs, ignoring case
/// and diacritics, in their display name or subtitle.
///
/// An empty or all-blank query matches everyone.
///
/// ```swift
/// let search = UserSearch("jose")
/// search.matches(profile)          // true for "José Álvarez"
/// UserSearch("ÅSA").matches(åsa)   // true for "åsa lind"
/// ```
public struct UserSearch: Sendable, Hashable {
    /// The query's words, folded.
    public let terms: [String]

    public init(_ query: String?) {
        terms = (query ?? "").split(whereSeparator: \.isWhitespace).map { UserSearch.fold(String($0)) }
    }

    public func matches(_ profile: UserProfile) -> Bool {
        guard !terms.isEmpty else { return true }
        let name = UserSearch.fold(profile.displayName)
        let subtitle = profile.subtitle.map(UserSearch.fold) ?? ""
        return terms.allSatisfy { name.contains($0) || subtitle.contains($0) }
    }

    /// Case- and diacritic-insensitive form, independent of the device's locale so the same query
    /// finds the same users everywhere (the sync server's user search folds alike).
    public static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }
}
