/// The kinds of skipped records every JSON log parser shares (``OktaLogParser``,
/// ``EntraSignInParser``, ``CloudTrailLoginParser``, ``WindowsSecurityParser``), as the import's
/// summary counts them. Each parser adds the kinds of its own format.
enum AuthLogSkip {
    /// Not one JSON value: malformed, not UTF-8, nested too deep, or with a key given twice.
    static let notJSON = "not JSON"
    /// JSON, but not an object of the format's records.
    static let notARecord = "not a record"
    /// A record of a kind that is no sign-in, sign-out or lock.
    static let notAuthentication = "not authentication"
    /// A time missing, without an offset, or outside the years 0001…9999.
    static let unreadableTime = "unreadable time"
    /// A user that is not a valid user id (a control character, over 256 bytes, not a string).
    static let unreadableUser = "unreadable user"
    /// A device (host, account) that is not a valid device id.
    static let unreadableDevice = "unreadable device"
}
