import LMDB
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a store operation failed. Every message says what was wrong and what to do.
///
/// Match on ``code``; new codes may be added without breaking callers. The store's methods
/// throw `StoreError` itself (typed throws), so a `catch` after them already has it: no `as`
/// cast (which the compiler would flag as always true).
///
/// ```swift
/// do { _ = try await store.append(event) }
/// catch where error.code == .conflict { … }   // `error` is a StoreError
/// catch { … }
/// ```
///
/// Every code is listed in docs/store.md § Errors.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable, CaseIterable {
            case storeMissing, notAStore, notWritable, newerFormat, corrupted, conflict, headMoved,
                seqMismatch, invalidEvent, transactionTooLarge, storage, closed, invalidQuery, signingKey, pruned, needsMigration,
                notDurable
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// Every code, for the test that holds docs/store.md § Errors to them.
        static var all: [Code] { Base.allCases.map(Code.init) }

        /// No store exists at the path (and creating one was not asked for).
        public static let storeMissing = Code(.storeMissing)
        /// The path holds something that is not an OnboardingStore.
        public static let notAStore = Code(.notAStore)
        /// The store cannot be created or written (permissions, read-only file system).
        public static let notWritable = Code(.notWritable)
        /// The store was written by a newer OnboardingStore.
        public static let newerFormat = Code(.newerFormat)
        /// The store has an older format and was opened read-only: a writable open migrates it.
        public static let needsMigration = Code(.needsMigration)
        /// A stored record or index is damaged.
        public static let corrupted = Code(.corrupted)
        /// The same event id was appended with different content.
        public static let conflict = Code(.conflict)
        /// The log's head was not the expected one (optimistic concurrency).
        public static let headMoved = Code(.headMoved)
        /// An event claimed a seq other than the one the store would assign.
        public static let seqMismatch = Code(.seqMismatch)
        /// The event breaks a rule of the vocabulary.
        public static let invalidEvent = Code(.invalidEvent)
        /// A single atomic batch is larger than one LMDB transaction can hold.
        public static let transactionTooLarge = Code(.transactionTooLarge)
        /// LMDB or the file system failed.
        public static let storage = Code(.storage)
        /// The store was closed.
        public static let closed = Code(.closed)
        /// A flush to disk failed with `relaxed` durability: commits already acknowledged may
        /// not be on disk. Sticky: every later append and `sync()` of the open store throws it
        /// (see ``OnboardingStore/sync()``).
        public static let notDurable = Code(.notDurable)
        /// A query's parameters contradict each other (a time range ending before it starts, …).
        public static let invalidQuery = Code(.invalidQuery)
        /// The signing key file is missing, unreadable, open to others, or not this store's.
        public static let signingKey = Code(.signingKey)
        /// The records an operation needs were pruned (see ``OnboardingStore/prune(before:batchRecords:progress:)``).
        public static let pruned = Code(.pruned)

        public var description: String { base.rawValue }
    }

    public let code: Code
    public let message: String
    /// Position in the appended batch of the event at fault, when there is one.
    public let batchIndex: Int?
    /// The seq concerned, when there is one.
    public let seq: UInt64?
    /// The operating system's `errno`, or LMDB's return code, of the failure underneath, when
    /// there was one (``isResourceShortage`` reads it).
    public let systemCode: Int32?

    public init(_ code: Code, _ message: String, batchIndex: Int? = nil, seq: UInt64? = nil, systemCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.batchIndex = batchIndex
        self.seq = seq
        self.systemCode = systemCode
    }

    /// A store error for `underlying` (an `LMDBError`, or a `StoreError` passed through), keeping
    /// its system code.
    init(_ code: Code, _ message: String, underlying: any Error, seq: UInt64? = nil) {
        if let store = underlying as? StoreError {
            self.init(code, message, seq: seq ?? store.seq, systemCode: store.systemCode)
        } else {
            self.init(code, message, seq: seq, systemCode: (underlying as? LMDBError)?.code)
        }
    }

    /// Whether the failure is a resource running out — file descriptors, memory, disk space,
    /// LMDB readers or map — rather than a fault of the store or the request: retrying later may
    /// succeed (a server answers 503 with Retry-After).
    public var isResourceShortage: Bool { resource != nil }

    /// The resource that ran out, in words, when ``isResourceShortage``.
    public var resource: String? {
        guard let systemCode else { return nil }
        switch systemCode {
        case EMFILE, ENFILE: return "file descriptors"
        case ENOMEM: return "memory"
        case ENOSPC, EDQUOT: return "disk space"
        case LMDBError.readersFull.code: return "LMDB reader slots"
        case LMDBError.mapFull.code, LMDBError.mapAtMaximum.code: return "LMDB map space"
        default: return nil
        }
    }

    public var description: String { message }

    func at(batchIndex: Int) -> StoreError {
        StoreError(code, message, batchIndex: batchIndex, seq: seq, systemCode: systemCode)
    }
}
