import Foundation
import Testing
@testable import OnboardingImport
import OnboardingModel
import OnboardingStore
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct EventImporterTests {
    static func events(_ count: Int) -> [Event] {
        (0..<count).map { index in
            Event(
                id: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012x", index + 1))!, device: "kiosk-7",
                at: Timestamp(millisecondsSince1970: 1_796_054_400_000 + Int64(index) * 1000), user: "user-\(index % 5)", flow: nil,
                payload: index % 3 == 0
                    ? .signInSucceeded(method: .password, secondFactor: false)
                    : .signInFailed(method: .password, reason: .invalidPassword))
        }
    }

    static func jsonl(_ events: [Event], seqs: [UInt64?]? = nil) -> String {
        events.indices.map { EventJSON.encode(events[$0], seq: seqs?[$0] ?? nil) + "\n" }.joined()
    }

    static func importer(_ store: String, commitEvents: Int = 10) -> EventImporter {
        var options = OnboardingStore.Options()
        options.durability = .relaxed
        return EventImporter(storePath: store, storeOptions: options, commitEvents: commitEvents)
    }

    static func storedEvents(_ path: String) throws -> [Event] {
        var options = OnboardingStore.Options()
        options.readOnly = true
        options.createIfMissing = false
        let store = try OnboardingStore.open(at: path, options: options)
        defer { store.close() }
        return try store.records(in: 1...UInt64.max).map(\.event)
    }

    @Test("a seq the store would refuse at line 25 of 30 stops the import before its first commit of 10")
    func everythingIsCheckedBeforeTheFirstCommit() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = Self.events(30)
        var seqs: [UInt64?] = (1...30).map { UInt64($0) }
        seqs[24] = 26
        let file = try directory.write("events.jsonl", Self.jsonl(events, seqs: seqs))
        let store = directory.appending("store")
        let error = #expect(throws: ImportError.self) { try Self.importer(store).run(try ImportInput(path: file)) }
        #expect(error?.kind == .invalidInput)
        #expect(error?.message == "\(file): line 25: event claims seq 26 but the store's next seq is 25; omit \"seq\" to let the store assign it")
        #expect(!FileManager.default.fileExists(atPath: store), "no store is created for a refused import")
    }

    @Test("repeats are skipped, and the seqs after them still line up, in memory and spilled", arguments: [RepeatedIDFinder.defaultBufferEntries, 1])
    func repeatsWithSeqs(idBufferEntries: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = Self.events(25)
        // Lines 1…25 with their seqs, then 5 and 1 again (lines 26, 27), then line 6 again with no seq (28).
        let text =
            Self.jsonl(events, seqs: (1...25).map { UInt64($0) })
            + EventJSON.encode(events[4], seq: 5) + "\n" + EventJSON.encode(events[0], seq: 1) + "\n"
            + EventJSON.encode(events[5], seq: nil) + "\n"
        let file = try directory.write("events.jsonl", text)
        let store = directory.appending("store")
        var importer = Self.importer(store, commitEvents: 7)
        importer.idBufferEntries = idBufferEntries
        let summary = try importer.run(try ImportInput(path: file))
        #expect(summary.appended == 25 && summary.firstSeq == 1 && summary.lastSeq == 25)
        #expect(summary.repeats == 3 && summary.alreadyStored == 0 && summary.events == 28)
        #expect(summary.repeatExamples == [.init(line: 26, firstLine: 5), .init(line: 27, firstLine: 1), .init(line: 28, firstLine: 6)])
        #expect(summary.commits == 4)
        #expect(try Self.storedEvents(store) == events)

        // Interleaved: a repeat before later events that claim seqs counted without it.
        let interleaved = directory.appending("interleaved")
        let lines = [EventJSON.encode(events[0], seq: 1), EventJSON.encode(events[0], seq: 1), EventJSON.encode(events[1], seq: 2)]
        let second = try directory.write("interleaved.jsonl", lines.joined(separator: "\n"))
        #expect(try importer.with(store: interleaved).run(try ImportInput(path: second)).appended == 2)
    }

    @Test("a repeat that claims another seq than its first line is a bad line naming both")
    func repeatWithOtherSeq() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = Self.events(3)
        let text = [
            EventJSON.encode(events[0], seq: 1), EventJSON.encode(events[1], seq: 2), EventJSON.encode(events[0], seq: 2),
            EventJSON.encode(events[2], seq: nil), EventJSON.encode(events[2], seq: 3)
        ].joined(separator: "\n")
        let file = try directory.write("events.jsonl", text)
        let error = #expect(throws: ImportError.self) { try Self.importer(directory.appending("store")).run(try ImportInput(path: file)) }
        #expect(
            error?.message == """
                \(file): line 3: repeats the event of line 1 but claims seq 2, not its seq 1; nothing was imported (1 more bad line below)
                  line 5: repeats the event of line 4 but claims seq 3, and line 4 claims none; give both the same seq, or neither
                """)
    }

    @Test("an import into a store holding the first part appends the rest: stored events are skipped")
    func resumes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let events = Self.events(50)
        let store = directory.appending("store")
        let first = try directory.write("first.jsonl", Self.jsonl(Array(events.prefix(23)), seqs: (1...23).map { UInt64($0) }))
        #expect(try Self.importer(store).run(try ImportInput(path: first)).appended == 23)
        let all = try directory.write("all.jsonl", Self.jsonl(events, seqs: (1...50).map { UInt64($0) }))
        let summary = try Self.importer(store).run(try ImportInput(path: all))
        #expect(summary.appended == 27 && summary.alreadyStored == 23 && summary.firstSeq == 24 && summary.lastSeq == 50)
        #expect(try Self.storedEvents(store) == events)

        // A stored id with other content is found by the check, before anything is appended.
        var changed = events
        changed[40].at = changed[40].at.adding(milliseconds: 1)
        let more = Self.events(60).suffix(10)
        let conflicting = try directory.write("conflicting.jsonl", Self.jsonl(Array(more)) + Self.jsonl([changed[40]]))
        let error = #expect(throws: ImportError.self) { try Self.importer(store).run(try ImportInput(path: conflicting)) }
        #expect(
            error?.message
                == "\(conflicting): line 11: event \(changed[40].id.uuidString.lowercased()) is already stored at seq 41 with different content; an event id may only be reused for the identical event"
        )
        #expect(try Self.storedEvents(store).count == 50)
    }

    @Test("a pipe is copied to a temporary file as it is checked, and appended from there")
    func pipeIsSpooled() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fifo = directory.appending("events.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let events = Self.events(40)
        let text = "\u{FEFF}" + Self.jsonl(events)
        // The writer blocks until the import opens the pipe: its own thread, not the test's.
        let writer = Thread {
            let handle = FileHandle(forWritingAtPath: fifo)
            handle?.write(Data(text.utf8))
            try? handle?.close()
        }
        writer.start()
        let summary = try Self.importer(directory.appending("store"), commitEvents: 15).run(try ImportInput(path: fifo))
        #expect(summary.appended == 40 && summary.commits == 3)
        #expect(try Self.storedEvents(directory.appending("store")) == events)
    }

    @Test("a file written to between the check and the append is refused")
    func changedFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("events.jsonl", Self.jsonl(Self.events(5)))
        let input = try ImportInput(path: file)
        let first = try input.firstPassReader()
        try JSONLReader.read(from: first) { _ in }
        let handle = try #require(FileHandle(forWritingAtPath: file))
        try handle.seekToEnd()
        handle.write(Data(Self.jsonl(Self.events(6).suffix(1)).utf8))
        try handle.close()
        let error = #expect(throws: ImportError.self) { _ = try input.rereader() }
        #expect(error?.kind == .inputOutput)
        #expect(error?.message.hasPrefix("\(file) changed while it was being imported") == true)
    }
}

extension EventImporter {
    func with(store path: String) -> EventImporter {
        var copy = self
        copy.storePath = path
        return copy
    }
}
