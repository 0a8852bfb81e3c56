extension UserProfile {
    /// What stands in for a missing picture (a user without `image_ref`, docs/events.md §
    /// `user_added`): the first letter of the first and of the last word of `displayName`,
    /// uppercased; one word gives one letter.
    ///
    /// Works for every script: a letter is any `Character` whose `isLetter` holds, so Arabic,
    /// Cyrillic, Hangul and CJK names have initials too (a CJK name written without spaces is one
    /// word, so its first character). Words without any letter (an emoji, a number) are skipped;
    /// a name without letters gives "?".
    ///
    /// ```swift
    /// UserProfile.initials(of: "Alice van der Berg")   // "AB"
    /// UserProfile.initials(of: "山田太郎")               // "山"
    /// UserProfile.initials(of: "🎉 zoë")                // "Z"
    /// ```
    public static func initials(of displayName: String) -> String {
        let firstLetters = displayName.split(whereSeparator: \.isWhitespace).compactMap { word in
            word.first(where: \.isLetter)
        }
        guard let first = firstLetters.first else { return "?" }
        guard firstLetters.count > 1, let last = firstLetters.last else { return first.uppercased() }
        return first.uppercased() + last.uppercased()
    }
}
