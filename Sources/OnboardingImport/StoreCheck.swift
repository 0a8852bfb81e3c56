import Foundation
import OnboardingModel
import OnboardingStore

/// Checks an input's events against the store as it is before the import, in file order, with
/// the rules the store applies when it appends them (docs/store.md): an id already stored must
/// have the same content and, with a `seq`, the seq it is stored at; a new event with a `seq`
/// must claim the seq it will get. Doing this before the first write is what keeps an import
/// that the store would refuse halfway from appending its first commits.
///
/// The store checks again as it appends (another process may have appended in between); this
/// pass finds the same failures first and reports them with the same words.
///
/// ```swift
/// var check = StoreCheck(store: store)
/// try check.check(decoded, line: 12)
/// if let failure = check.failure { … }
/// ```
struct StoreCheck {
    struct Failure {
        var line: Int
        var message: String
        /// The input's first event claims a seq past this store's next: an export of a pruned
        /// store or one made with `--since-seq` (its own message).
        var startsLater = false
    }

    private let store: OnboardingStore?
    private let head: UInt64
    private var nextSeq: UInt64
    private var isFirstEvent = true
    private(set) var failure: Failure?

    /// Events the check found new (not in the store), lines that repeat one included.
    var newEvents: UInt64 { nextSeq - head - 1 }
    /// Some stored event could only be compared by the store itself (see ``mayBeErasedForm``).
    private(set) var leftToTheStore = false

    init(store: OnboardingStore?) throws(ImportError) {
        self.store = store
        do { head = try store?.head().seq ?? 0 } catch { throw ImportError(.store, error.message, storeError: error) }
        nextSeq = head + 1
    }

    /// Checks the next event of the input (skip lines that repeat an earlier one: they get no seq).
    mutating func check(_ decoded: EventJSON.Decoded, line: Int) throws(ImportError) {
        guard failure == nil else { return }
        defer { isFirstEvent = false }
        let event = decoded.event
        var id: String { event.id.uuidString.lowercased() } // only for a message: formatting costs more than the check
        var storedSeq: UInt64?
        if let store, head > 0 {
            do {
                storedSeq = try store.seq(of: event.id)
                if let seq = storedSeq, let record = try store.storedRecord(at: seq), record.event != event {
                    guard Self.mayBeErasedForm(stored: record.event, of: event) else {
                        failure = Failure(
                            line: line,
                            message:
                                "event \(id) is already stored at seq \(seq) with different content; an event id may only be reused for the identical event")
                        return
                    }
                    leftToTheStore = true
                }
            } catch {
                throw ImportError(.store, error.message, storeError: error)
            }
        }
        if let seq = storedSeq {
            if let claimed = decoded.seq, claimed != seq {
                failure = Failure(line: line, message: "event \(id) claims seq \(claimed) but is stored at seq \(seq)")
            }
            return
        }
        if let claimed = decoded.seq, claimed != nextSeq {
            if isFirstEvent && claimed > nextSeq {
                failure = Failure(
                    line: line,
                    message:
                        "the file starts at seq \(claimed) but this store's next seq is \(nextSeq): it is an export of a pruned store (or one made with --since-seq) and the events before it are not in this store; nothing was imported — the sync server keeps the full history, export that instead",
                    startsLater: true)
            } else {
                failure = Failure(
                    line: line, message: "event claims seq \(claimed) but the store's next seq is \(nextSeq); omit \"seq\" to let the store assign it")
            }
            return
        }
        nextSeq += 1
    }

    /// A stored record of a user forgotten since reads back erased (its user a pseudonym): only
    /// the store, which compares the sealed bytes, can tell whether the input's event is the one
    /// it was. Such a line is left to the store's own check.
    private static func mayBeErasedForm(stored: Event, of event: Event) -> Bool {
        guard let storedUser = stored.user, let user = event.user else { return false }
        return UserRef.isLiteral(storedUser) && !UserRef.isLiteral(user)
    }
}
