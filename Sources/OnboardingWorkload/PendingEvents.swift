import OnboardingModel

/// Events laid out but not yet returned, earliest first; events of the same millisecond keep the
/// order they were added in.
///
/// A sorted queue rather than a heap: events arrive nearly in order (the sign-in traffic in time
/// order, form events a few seconds before the newest), so an event goes in at or near the end,
/// and the earliest leaves from the front.
struct PendingEvents {
    struct Entry {
        let at: Int64
        let event: Event
        let actor: WorkloadActor
    }

    /// Taken entries the array keeps before it is compacted, when they are also half of it:
    /// moving the rest then costs less per entry taken than keeping the dead ones would in memory.
    static let compactionThreshold = 1_024

    private var entries: [Entry] = []
    /// Entries before this index were taken already.
    private var head = 0

    var first: Entry? { head < entries.count ? entries[head] : nil }

    mutating func add(_ event: Event, actor: WorkloadActor) {
        let entry = Entry(at: event.at.millisecondsSince1970, event: event, actor: actor)
        guard let last = entries.last, last.at > entry.at, head < entries.count else {
            entries.append(entry)
            return
        }
        // After every entry of its millisecond or earlier: the first later one is its place.
        var low = head, high = entries.count - 1
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].at > entry.at { high = middle } else { low = middle + 1 }
        }
        entries.insert(entry, at: low)
    }

    mutating func removeFirst() -> Entry {
        let entry = entries[head]
        head += 1
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= PendingEvents.compactionThreshold && head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
        return entry
    }
}
