import Foundation
import HTTPServer
import OnboardingModel
import OnboardingProjections
@testable import OnboardingServer
import OnboardingStore
import Synchronization
import Testing
import TestSupport

/// The history endpoints as the console uses them: newest first, `erased`, the actions in a
/// page's span, and polls that wait for a newer attempt — on both storages.
@Suite(.slow) struct HistoryConsoleTests {
    typealias Clock = ServerHardeningTests.ManualServerClock

    /// Alice on a (even seconds) and b (odd seconds): fail, succeed, fail, sign out, repeated
    /// (sessions that end by sign-out and by a newer sign-in); bob fails and succeeds on b.
    static func scenario(_ fixture: ConsoleFixture) async throws {
        for (device, offset) in [("a", 0), ("b", 1)] {
            var events = (0..<14).map { index -> Event in
                let payload: Payload =
                    switch index % 4 {
                    case 0: .signInFailed(method: .password, reason: .invalidPassword)
                    case 1: .signInSucceeded(method: .passcode, secondFactor: false)
                    case 2: .secondFactorFailed(method: .totp)
                    default: index % 8 == 3 ? .signedOut(reason: .user) : .signInSucceeded(method: .password, secondFactor: true)
                    }
                return ConsoleFixture.event(device, index * 2 + offset, payload)
            }
            if device == "b" {
                events.append(ConsoleFixture.event("b", 40, user: "bob"))
                events.append(ConsoleFixture.event("b", 41, user: "bob", .signInSucceeded(method: .password, secondFactor: false)))
            }
            try await fixture.record(events)
        }
    }

    /// Every page of `path` (with `?`/`&` as needed), concatenated: attempts, sessions, actions.
    static func allPages(_ fixture: ConsoleFixture, _ path: String, limit: Int) throws -> (attempts: [JSONValue], sessions: [JSONValue], actions: [JSONValue]) {
        var attempts: [JSONValue] = []
        var sessions: [JSONValue] = []
        var actions: [JSONValue] = []
        var cursor: String?
        var pages = 0
        repeat {
            let separator = path.contains("?") ? "&" : "?"
            let (status, page) = try fixture.get(path + separator + "limit=\(limit)" + (cursor.map { "&cursor=\($0)" } ?? ""))
            #expect(status == 200, "\(page)")
            #expect(ConsoleFixture.array(page["attempts"]).count <= limit)
            attempts += ConsoleFixture.array(page["attempts"])
            sessions += ConsoleFixture.array(page["sessions"])
            actions += ConsoleFixture.array(page["actions"])
            cursor = page["next_cursor"]?.stringValue
            pages += 1
        } while cursor != nil && pages < 1_000
        return (attempts, sessions, actions)
    }

    /// Sessions by where they started, with how they ended.
    static func ends(_ sessions: [JSONValue]) -> [String: String] {
        var ends: [String: String] = [:]
        for session in sessions {
            ends["\(session["device"]?.stringValue ?? "")#\(ConsoleFixture.integer(session["seq"]) ?? 0)"] =
                "\(session["end"]?.stringValue ?? "open") \(session["end_reason"]?.stringValue ?? "-")"
        }
        return ends
    }

    @Test(arguments: TestDatabase.storages) func newestFirstPagesAreTheOldestFirstHistoryReversed(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await Self.scenario(fixture)
        for path in [
            SyncPaths.history(user: "alice"), SyncPaths.history(user: "alice") + "?device=b", SyncPaths.history(device: "b"),
            SyncPaths.history(user: "alice") + "?outcome=succeeded,throttled", SyncPaths.history(user: "alice") + "?factor=password&since=2026-11-30T16:00:05Z"
        ] {
            let oldest = try Self.allPages(fixture, path, limit: 10_000)
            #expect(!oldest.attempts.isEmpty, "\(path)")
            for limit in [1, 2, 3, 7, 10_000] {
                let newest = try Self.allPages(fixture, path + (path.contains("?") ? "&" : "?") + "order=newest", limit: limit)
                #expect(newest.attempts == oldest.attempts.reversed(), "\(path) limit \(limit)")
                #expect(newest.sessions.count == oldest.sessions.count, "\(path) limit \(limit)")
                #expect(Self.ends(newest.sessions) == Self.ends(oldest.sessions), "\(path) limit \(limit): every session ends as oldest first says")
                let starts = newest.sessions.compactMap { $0["start"]?.stringValue }
                #expect(starts == starts.sorted(by: >), "sessions newest first")
            }
        }
        // The cursor of an attempt continues right after it, oldest first, and before it, newest first.
        let whole = try Self.allPages(fixture, SyncPaths.history(user: "alice"), limit: 10_000).attempts
        let middle = try #require(whole[5]["cursor"]?.stringValue)
        let (_, after) = try fixture.get(SyncPaths.history(user: "alice") + "?limit=2&cursor=\(middle)")
        #expect(ConsoleFixture.array(after["attempts"]) == Array(whole[6...7]))
        let (_, before) = try fixture.get(SyncPaths.history(user: "alice") + "?limit=2&order=newest&cursor=\(middle)")
        #expect(ConsoleFixture.array(before["attempts"]) == [whole[4], whole[3]])
    }

    @Test(arguments: TestDatabase.storages) func anAttemptOfAForgottenUserSaysErased(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await Self.scenario(fixture)
        #expect(fixture.call("POST", SyncPaths.forget(user: "bob"), token: fixture.admin).status == 200)
        for order in ["oldest", "newest"] {
            let (status, page) = try fixture.get(SyncPaths.history(device: "b") + "?order=\(order)")
            #expect(status == 200)
            let attempts = ConsoleFixture.array(page["attempts"])
            let bobs = attempts.filter { $0["user"]?.stringValue != "alice" }
            #expect(bobs.count == 2)
            #expect(bobs.allSatisfy { $0["erased"] == .bool(true) && UserRef.isLiteral($0["user"]?.stringValue ?? "") })
            #expect(attempts.filter { $0["user"]?.stringValue == "alice" }.allSatisfy { $0["erased"] == .bool(false) })
        }
        #expect(try fixture.get(SyncPaths.history(device: "b")).body["actions"] == .array([]), "a device's history has no actions")
    }

    /// A clear at 10.5 s shows on the one page whose span holds it, paging either way; a
    /// factor filter keeps clears of every factor and of its own.
    @Test(arguments: TestDatabase.storages) func aClearAppearsOnTheOnePageWhoseSpanHoldsIt(storage: String) async throws {
        let clock = Clock(ConsoleFixture.start)
        let fixture = try ConsoleFixture(storage: storage, clock: { clock.now })
        defer { fixture.close() }
        try await Self.scenario(fixture)
        clock.set(ConsoleFixture.start.adding(milliseconds: 10_500))
        let every = fixture.call("POST", "/v1/users/alice/lockout/clear", token: fixture.admin, body: Array(#"{"factor":null,"reason":"ticket 7"}"#.utf8))
        #expect(every.status == 200, "\(String(decoding: every.body, as: UTF8.self))")
        clock.set(ConsoleFixture.start.adding(milliseconds: 20_500))
        let password = fixture.call(
            "POST", "/v1/users/alice/lockout/clear", token: fixture.admin, body: Array(#"{"factor":"password","reason":"ticket 8"}"#.utf8))
        #expect(password.status == 200)
        clock.set(ConsoleFixture.start.adding(milliseconds: 90_000))
        let path = SyncPaths.history(user: "alice")
        for order in ["oldest", "newest"] {
            for limit in [1, 3, 10_000] {
                let pages = try Self.allPages(fixture, path + "?order=\(order)", limit: limit)
                let reasons = pages.actions.compactMap { $0["reason"]?.stringValue }
                #expect(reasons.sorted() == ["ticket 7", "ticket 8"], "\(order) limit \(limit): \(reasons)")
                let second = try Self.allPages(fixture, path + "?order=\(order)&factor=second_factor", limit: limit)
                #expect(second.actions.compactMap { $0["reason"]?.stringValue } == ["ticket 7"], "\(order) limit \(limit)")
            }
        }
        let (_, early) = try fixture.get(path + "?until=2026-11-30T16:00:10Z")
        #expect(ConsoleFixture.array(early["actions"]).isEmpty)
        let (_, onBob) = try fixture.get(SyncPaths.history(user: "bob"))
        #expect(ConsoleFixture.array(onBob["actions"]).isEmpty, "actions are about their user")
        let action = ConsoleFixture.array(try fixture.get(path + "?since=2026-11-30T16:00:10Z&until=2026-11-30T16:00:11Z").body["actions"]).first
        #expect(action?["action"] == .string("lockout_cleared") && action?["user"] == .string("alice") && action?["factor"] == .null)
        #expect(action?["at"] == .string("2026-11-30T16:00:10.500Z"))
        #expect(action?["actor"]?.stringValue == "admin:" + TokenStore.tokenID(of: fixture.admin))
    }

    @Test(arguments: TestDatabase.storages) func hostileOrderAndWaitAre400NamingTheParameter(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await Self.scenario(fixture)
        let cursor = try #require(
            ConsoleFixture.array(try fixture.get(SyncPaths.history(user: "alice") + "?order=newest&limit=1").body["attempts"]).first?["cursor"]?.stringValue)
        for path in [SyncPaths.history(user: "alice"), SyncPaths.history(device: "a")] {
            for (query, message) in [
                ("order=NEWEST", "query parameter order: order \"NEWEST\" must be oldest or newest"),
                ("order=%0A", "query parameter order: order \"\\n\" must be oldest or newest"),
                ("order=" + String(repeating: "x", count: 5_000), nil),
                ("wait=", "query parameter wait: wait \"\" must be a whole number of seconds from 0 to 30"),
                ("wait=-1", "query parameter wait: wait \"-1\" must be a whole number of seconds from 0 to 30"),
                ("wait=31", "query parameter wait: wait \"31\" must be a whole number of seconds from 0 to 30"),
                ("wait=18446744073709551615", "query parameter wait: wait \"18446744073709551615\" must be a whole number of seconds from 0 to 30"),
                ("wait=1.5", "query parameter wait: wait \"1.5\" must be a whole number of seconds from 0 to 30"),
                ("wait=%01", "query parameter wait: wait \"\\u{0001}\" must be a whole number of seconds from 0 to 30"),
                ("wait=5", "query parameter wait: a poll needs a cursor (the next_cursor of the newest attempt shown, or of a page read to its end)"),
                ("wait=5&order=newest&cursor=\(cursor)", "query parameter wait: a poll waits for newer attempts, so it needs order=oldest"),
                (
                    "since=0001-01-01T00:00:00Z&until=9999-12-31T23:59:59.999Z&order=newest&limit=18446744073709551615",
                    "query parameter limit: limit \"18446744073709551615\" must be a whole number from 1 to 10000"
                )
            ] {
                let (status, text) = fixture.refusal(path + "?" + query)
                #expect(status == 400, "\(path)?\(query.prefix(60))")
                if let message { #expect(text == message, "\(query)") }
                #expect(text.map { !$0.contains("\n") } ?? false)
            }
            // Far-past and far-future bounds are a range like any other, newest first too.
            let (status, page) = try fixture.get(path + "?since=0001-01-01T00:00:00Z&until=9999-12-31T23:59:59.999Z&order=newest&wait=0")
            #expect(status == 200 && !ConsoleFixture.array(page["attempts"]).isEmpty)
        }
    }

    /// Where an answer given later lands.
    final class PendingAnswer: Sendable {
        private let state = Mutex<SyncResponse?>(nil)
        func set(_ response: SyncResponse) { state.withLock { $0 = response } }
        var response: SyncResponse? { state.withLock { $0 } }

        /// The answer, waiting up to `seconds` for it (blocks: call it on a thread of its own).
        func wait(seconds: Double) -> SyncResponse? {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if let response { return response }
                Thread.sleep(forTimeInterval: 0.01)
            }
            return response
        }
    }

    /// Registers a poll through the router's asynchronous entry and returns where its answer lands.
    static func poll(_ server: SyncServer, _ path: String, token: String) -> PendingAnswer {
        let answer = PendingAnswer()
        server.handle(SyncRequest(method: "GET", path: path, headers: ["authorization": "Bearer \(token)"])) { reply in answer.set(reply.response) }
        return answer
    }

    /// A poll from the newest attempt waits; a newer attempt stored — through this node, or on
    /// PostgreSQL through another — answers it with that attempt, well before its wait is out.
    @Test(arguments: TestDatabase.storages) func aPollIsAnsweredByTheNextAttemptFromAnyNode(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await Self.scenario(fixture)
        let writer = storage == "postgres" ? try fixture.reopen() : fixture.server
        for path in [SyncPaths.history(user: "alice"), SyncPaths.history(device: "a")] {
            let newest = try #require(ConsoleFixture.array(try fixture.get(path + "?order=newest&limit=1").body["attempts"]).first)
            let cursor = try #require(newest["cursor"]?.stringValue)
            let answer = Self.poll(fixture.server, path + "?cursor=\(cursor)&wait=30", token: fixture.auditor)
            try await Task.sleep(for: .milliseconds(300))
            #expect(answer.response == nil, "nothing newer yet: the poll waits")
            #expect(fixture.server.polls.count == 1)
            let stored = ContinuousClock.now
            let latest = ConsoleFixture.integer(newest["seq"]) ?? 0
            try await fixture.record([ConsoleFixture.event("a", 100 + latest, .signInFailed(method: .passcode, reason: .invalidPasscode))], through: writer)
            let response = try #require(try await onOwnThread { answer.wait(seconds: 40) })
            let latency = ContinuousClock.now - stored
            #expect(response.status == 200)
            let attempts = ConsoleFixture.array(try JSONValue.parse(bytes: response.body)["attempts"])
            #expect(attempts.map { $0["reason"] } == [.string("invalid_passcode")])
            // Answered by the attempt, not by the end of the 30 s wait (the re-check of a shared
            // database is 1 s; a loaded machine may take longer, never most of the wait).
            #expect(latency < .seconds(20), "\(path): answered after \(latency)")
            print("console-api: \(storage) poll answered \(latency) after the upload (\(path))")
        }
        #expect(fixture.server.polls.count == 0)
    }

    @Test(arguments: TestDatabase.storages) func aPollWithNothingNewAnswersAnEmptyPageAtItsDeadline(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await Self.scenario(fixture)
        let cursor = try #require(
            ConsoleFixture.array(try fixture.get(SyncPaths.history(user: "bob") + "?order=newest&limit=1").body["attempts"]).first?["cursor"]?.stringValue)
        let started = ContinuousClock.now
        let answer = Self.poll(fixture.server, SyncPaths.history(user: "bob") + "?cursor=\(cursor)&wait=1", token: fixture.auditor)
        let response = try #require(try await onOwnThread { answer.wait(seconds: 10) })
        #expect(ContinuousClock.now - started >= .seconds(1), "held until its wait was out")
        #expect(response.status == 200)
        let page = try JSONValue.parse(bytes: response.body)
        #expect(page["attempts"] == .array([]) && page["next_cursor"] == .null)
        #expect(response.headers["content-security-policy"] == SyncServer.contentSecurityPolicy)
    }

    /// 32 polls wait; the 33rd is 503 with Retry-After 1; stopping the server answers the 32.
    @Test(arguments: TestDatabase.storages) func atMostThirtyTwoPollsWaitAndAShutdownAnswersThem(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await Self.scenario(fixture)
        let cursor = try #require(
            ConsoleFixture.array(try fixture.get(SyncPaths.history(user: "bob") + "?order=newest&limit=1").body["attempts"]).first?["cursor"]?.stringValue)
        let path = SyncPaths.history(user: "bob") + "?cursor=\(cursor)&wait=30"
        let answers = (0..<SyncLimits.maximumWaitingPolls).map { _ in Self.poll(fixture.server, path, token: fixture.auditor) }
        #expect(fixture.server.polls.count == SyncLimits.maximumWaitingPolls)
        let refused = fixture.call("GET", path, token: fixture.auditor)
        #expect(refused.status == 503 && refused.headers["retry-after"] == "1")
        #expect(SyncWire.error(from: refused.body)?.message.contains("32 history polls") == true)
        // Uploads and other reads are served meanwhile.
        #expect(try fixture.get(SyncPaths.history(user: "alice")).status == 200)
        // Answered by the shutdown itself, before it returns.
        fixture.server.beginShutdown()
        for answer in answers { #expect(answer.response?.status == 503) }
    }

    /// Over HTTP with 2 handler threads, 32 waiting polls hold none of them: an upload and a
    /// history read are answered while all 32 wait.
    @Test(arguments: TestDatabase.storages) func waitingPollsOverHTTPDoNotStarveUploads(storage: String) async throws {
        let fixture = try ConsoleFixture(storage: storage)
        defer { fixture.close() }
        try await Self.scenario(fixture)
        var limits = SyncHTTPHandler.limits
        limits.handlerThreadCount = 2
        let http = HTTPServer(port: 0, limits: limits, handler: SyncHTTPHandler(server: fixture.server))
        try http.start()
        defer { http.stop() }
        let transport = try HTTPTransport(baseURL: URL(string: "http://127.0.0.1:\(http.port)")!, timeout: .seconds(60))
        let cursor = try #require(
            ConsoleFixture.array(try fixture.get(SyncPaths.history(user: "bob") + "?order=newest&limit=1").body["attempts"]).first?["cursor"]?.stringValue)
        let auditor = fixture.auditor
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<SyncLimits.maximumWaitingPolls {
                group.addTask {
                    try await transport.send(
                        SyncRequest(
                            method: "GET", path: SyncPaths.history(user: "bob") + "?cursor=\(cursor)&wait=30",
                            headers: ["authorization": "Bearer \(auditor)"])
                    ).status
                }
            }
            let deadline = ContinuousClock.now + .seconds(60)
            while fixture.server.polls.count < SyncLimits.maximumWaitingPolls && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(fixture.server.polls.count == SyncLimits.maximumWaitingPolls)
            let (store, token) = try fixture.device("a")
            _ = try await store.append([ConsoleFixture.event("a", 200)])
            let cursorAnswer = try await transport.send(
                SyncRequest(method: "GET", path: SyncPaths.cursor(device: "a"), headers: ["authorization": "Bearer \(token)"]))
            let records = try store.records(in: (try SyncWire.cursor(from: cursorAnswer.body).acknowledgedSeq + 1)...(try store.head().seq))
            let upload = try await transport.send(
                SyncRequest(
                    method: "POST", path: SyncPaths.events(device: "a"),
                    headers: ["authorization": "Bearer \(token)", "content-type": SyncWire.contentType],
                    body: SyncWire.uploadBody(device: "a", records: records, keys: try store.syncKeys(for: records))))
            #expect(upload.status == 200)
            #expect(fixture.server.polls.count == SyncLimits.maximumWaitingPolls, "bob's polls still wait")
            let read = try await transport.send(
                SyncRequest(method: "GET", path: SyncPaths.history(user: "alice") + "?limit=1", headers: ["authorization": "Bearer \(auditor)"]))
            #expect(read.status == 200)
            // A newer attempt of bob answers all of them.
            let (bobStore, bobToken) = try fixture.device("b")
            _ = try await bobStore.append([ConsoleFixture.event("b", 300, user: "bob")])
            #expect(try fixture.upload("b", token: bobToken).status == 200)
            var statuses: [Int] = []
            for try await status in group { statuses.append(status) }
            #expect(statuses == Array(repeating: 200, count: SyncLimits.maximumWaitingPolls))
        }
    }
}
