import OnboardingStore

/// One way the lying server of the hostile mode answers a request in the real server's place
/// (docs/testing.md § The hostile server). Most are built from the real server's answer: the
/// request is forwarded, and the answer altered, so the lie is plausible and the real server
/// may well have stored what the device is told it did not. Acknowledgements and redirects are
/// told without forwarding half the time (``mayAnswerUnforwarded``): believed, such an
/// acknowledgement claims a batch the server never got.
public enum Lie: String, CaseIterable, Sendable {
    /// A 200 to an upload whose `acknowledged_seq` is past the batch: a seq the path saw later
    /// with its real hash, a little further, or 2^64−1.
    case acknowledgesBeyondTheBatch = "acknowledges beyond the batch"
    /// A 200 acknowledging exactly the batch, with another record's hash or a random one.
    case wrongHeadHash = "a wrong head_hash"
    /// A 200 with fewer results than records, or results out of order.
    case missingResults = "results missing or out of order"
    /// A 200 one of whose results says `refused`.
    case refusalInside200 = "a refusal inside a 200"
    /// A 200 whose body is not the protocol's JSON (cut short, HTML, empty, an array).
    case unreadable = "an unreadable 200"
    /// A 3xx to somewhere else, or to nowhere (forwarded or not).
    case redirect = "a redirect"
    /// `forget_users` of pseudonyms the device never had, signed with the real server's key (a
    /// server bug) or not at all.
    case forgetsStrangers = "forget requests for pseudonyms the device never had"
    /// `forget_users` of the device's live users, without `forget_signature`.
    case forgetsUnsigned = "unsigned forget requests for live users"
    /// `forget_users` of the device's live users, with a signature of another key, random bytes,
    /// or a real signature replayed from an answer for other users or another device.
    case forgetsWithBadSignature = "forget requests for live users with a bad signature"
    /// More `forget_users` than the protocol's limit, validly signed.
    case forgetsTooMany = "more forget requests than the protocol allows"
    /// A cursor claiming more than the server holds: with a wrong hash, or beyond the device's
    /// log (up to 2^64−1).
    case cursorClaimsMore = "a cursor claiming more than the server holds"
    /// A cursor claiming less than the server holds (a server restored from an old backup), with
    /// the hash the path saw there when it saw one.
    case cursorClaimsLess = "a cursor claiming less than the server holds"
    /// Undetectable: a cursor claiming a seq the server does not hold but the path saw in an
    /// upload (the server refused it, or it was lost on the way), with the hash it saw.
    case cursorClaimsASeenSeq = "a cursor claiming a seq it saw but the server does not hold"
    /// Undetectable: a 200 acknowledging exactly a batch the server refused, with its real hash.
    case acknowledgesARefusedBatch = "a 200 for a batch the server refused"

    /// Lies only an authenticated answer could expose: told only with
    /// ``SimulationOptions/undetectableLies``.
    public var isUndetectable: Bool { self == .cursorClaimsASeenSeq || self == .acknowledgesARefusedBatch }

    /// How often the liar picks it against the others: three times as often for the lies that,
    /// believed, would cost records (a claim of more than the server holds, which a prune then
    /// deletes) or erase users, so that a client missing one check meets its lie within a few
    /// seeds.
    var weight: Int {
        switch self {
        case .acknowledgesBeyondTheBatch, .cursorClaimsMore, .cursorClaimsLess, .forgetsUnsigned, .forgetsWithBadSignature: 3
        default: 1
        }
    }

    /// Whether the answer's forget requests are not the real server's (the client refuses them
    /// all: unsigned, or signed with another key or for another list).
    var altersForgetRequests: Bool { self == .forgetsStrangers || self == .forgetsUnsigned || self == .forgetsWithBadSignature }

    /// Whether the liar may answer without forwarding the request at all.
    var mayAnswerUnforwarded: Bool {
        switch self {
        case .redirect, .acknowledgesBeyondTheBatch, .wrongHeadHash, .missingResults, .refusalInside200: true
        default: false
        }
    }

    /// Lies told in answer to an upload (`POST …/events`).
    static let toUploads: [Lie] = [
        .acknowledgesBeyondTheBatch, .wrongHeadHash, .missingResults, .refusalInside200, .unreadable, .redirect,
        .forgetsStrangers, .forgetsUnsigned, .forgetsWithBadSignature, .forgetsTooMany, .acknowledgesARefusedBatch
    ]
    /// Lies told in answer to a cursor request (`GET …/cursor`: a sync run's first request,
    /// and the confirmation before a prune).
    static let toCursorRequests: [Lie] = [
        .cursorClaimsMore, .cursorClaimsLess, .unreadable, .redirect, .forgetsStrangers, .forgetsUnsigned,
        .forgetsWithBadSignature, .forgetsTooMany, .cursorClaimsASeenSeq
    ]

    /// How a client that caught the lie may end its run (or its confirmation): the protocol
    /// errors it names. A lie the client ignores (forget requests it must not carry out), one it
    /// cannot see, and one whose answer the network lost end nothing.
    var possibleErrors: [SyncError] {
        switch self {
        case .acknowledgesBeyondTheBatch, .wrongHeadHash, .missingResults, .refusalInside200, .unreadable, .forgetsTooMany:
            return [.badResponse]
        case .redirect:
            return [.redirected]
        case .cursorClaimsMore:
            return [.fork, .serverAhead]
        case .cursorClaimsLess:
            // Behind the prune point: the server lost acknowledged records. Elsewhere the client
            // resends, and the real server acknowledges its whole log, past the batch.
            return [.refused, .badResponse]
        case .forgetsStrangers, .forgetsUnsigned, .forgetsWithBadSignature, .cursorClaimsASeenSeq, .acknowledgesARefusedBatch:
            return []
        }
    }
}
