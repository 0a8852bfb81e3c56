/// Exit statuses of `onboard` (BSD sysexits), as README.md § Exit codes lists them.
enum ExitCode {
    static let success: Int32 = 0
    /// `verify` found problems in the store.
    static let verifyFailed: Int32 = 1
    /// Wrong command line: unknown command or option, missing or extra argument.
    static let usage: Int32 = 64
    /// Bad input data: an event or import line that breaks the vocabulary, a conflict.
    static let dataError: Int32 = 65
    /// The store or input file does not exist.
    static let noInput: Int32 = 66
    /// The store needs a newer onboard (newer format version).
    static let unavailable: Int32 = 69
    /// A bug in onboard (should never happen).
    static let software: Int32 = 70
    /// The store cannot be created or written.
    static let cannotCreate: Int32 = 73
    /// I/O error: the path is not a store, a record is damaged, LMDB failed.
    static let ioError: Int32 = 74
    /// Nothing can be done yet: `prune` before the sync server acknowledged any event.
    static let tempFail: Int32 = 75
    /// The sync server broke the protocol: an unreadable answer, an acknowledgement of other than
    /// the batch sent (or with another hash), a refusal inside a 200, too many forget requests.
    static let protocolError: Int32 = 76
    /// Not permitted: `sync` with a token the server refused (unknown, revoked, another device's),
    /// or a server whose key is not the one the store pinned.
    static let noPermission: Int32 = 77
    /// The server address is wrong: the server answered with a redirect (never followed).
    static let config: Int32 = 78
}
