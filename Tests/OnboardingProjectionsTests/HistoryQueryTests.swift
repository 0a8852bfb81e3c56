import Foundation
import Testing
import OnboardingModel
@testable import OnboardingProjections

/// History queries: outcome / factor / method filters, paging with cursors, and the one-line
/// errors for bad parameters.
@Suite("History queries")
struct HistoryQueryTests {
    let log = HistoryTests.log()

    /// The records a store would feed for `query`: those after the cursor, in seq order.
    func page(_ query: HistoryQuery) -> History {
        History.build(query, records: log.filter { $0.seq > (query.after?.seq ?? 0) })
    }

    @Test("outcome, factor and method filters keep the matching attempts and their sessions")
    func filters() throws {
        let failed = page(try HistoryQuery(parameters: ["user": "alice", "outcome": "failed,throttled"]))
        #expect(failed.attempts.map(\.seq) == [2, 3, 5, 10])
        #expect(failed.sessions.isEmpty)

        let secondFactor = page(try HistoryQuery(parameters: ["user": "alice", "factor": "second_factor"]))
        #expect(secondFactor.attempts == Array(HistoryTests.attempts[2...3]))

        // The passcode sign-in's session is still ended by the (unlisted) biometric sign-in after it.
        let passcode = page(try HistoryQuery(parameters: ["user": "alice", "method": "passcode", "outcome": "success"]))
        #expect(passcode.attempts == [HistoryTests.attempts[6]])
        #expect(passcode.sessions == [HistoryTests.sessions[1]])

        let biometricOrApple = page(try HistoryQuery(parameters: ["user": "alice", "method": "biometric,apple"]))
        #expect(biometricOrApple.attempts.map(\.seq) == [12, 13])
        #expect(biometricOrApple.sessions == Array(HistoryTests.sessions[2...3]))
    }

    @Test("a device's history without a user lists every user's attempts on it")
    func deviceWithoutUser() throws {
        let phone = page(try HistoryQuery(parameters: ["device": "phone-1", "outcome": "failed"]))
        #expect(phone.user == nil)
        #expect(phone.attempts.map(\.seq) == [2, 3, 5, 8])
        #expect(phone.attempts.map(\.user) == ["alice", "alice", "alice", "bob"])
    }

    @Test("pages of every size concatenate to the unpaged history, without duplicates")
    func paging() throws {
        for parameters in [
            ["user": "alice"], ["user": "alice", "outcome": "succeeded"], ["device": "phone-1"],
            ["user": "alice", "since": "2026-11-29T09:00:05Z", "until": "2026-11-29T18:40:00Z"]
        ] {
            let whole = page(try HistoryQuery(parameters: parameters))
            #expect(whole.nextCursor == nil)
            for limit in 1...(whole.attempts.count + 1) {
                var query = try HistoryQuery(parameters: parameters)
                query.limit = limit
                var attempts: [History.Attempt] = []
                var sessions: [History.SignInSession] = []
                var pages = 0
                while true {
                    let next = page(query)
                    #expect(next.attempts.count <= limit)
                    attempts += next.attempts
                    sessions += next.sessions
                    pages += 1
                    guard let cursor = next.nextCursor else { break }
                    #expect(next.attempts.count == limit, "only a full page has a next one")
                    query.after = HistoryCursor(token: cursor.token)
                    #expect(query.after == cursor)
                }
                #expect(attempts == whole.attempts, "limit \(limit), \(parameters)")
                #expect(sessions == whole.sessions, "limit \(limit), \(parameters)")
                #expect(Set(attempts.map(\.seq)).count == attempts.count)
                #expect(pages == max(1, (whole.attempts.count + limit - 1) / limit))
            }
        }
    }

    @Test("bad parameters are refused with one line naming them")
    func errors() {
        func message(_ parameters: [String: String]) -> String? {
            do { _ = try HistoryQuery(parameters: parameters); return nil } catch { return "\(error.parameter): \(error.message)" }
        }
        #expect(message(["user": "a", "outcome": "won"]) == "outcome: unknown outcome \"won\"; expected one of succeeded, failed, throttled")
        #expect(
            message(["user": "a", "method": "retina"])?.hasPrefix("method: unknown method \"retina\"; expected one of password, passcode, biometric") == true)
        #expect(message(["user": "a", "factor": "pin"]) == "factor: unknown factor \"pin\"; expected one of password, second_factor")
        #expect(
            message(["user": "a", "since": "2026-06-02T00:00:00Z", "until": "2026-06-01T00:00:00Z"])
                == "until: until (2026-06-01T00:00:00.000Z) is before since (2026-06-02T00:00:00.000Z)")
        #expect(message(["user": "a", "since": "June"])?.hasPrefix("since: since \"June\" is not an ISO 8601") == true)
        #expect(message(["user": "a", "cursor": "abc!"])?.hasPrefix("cursor: cursor \"abc!\" is not a cursor") == true)
        #expect(message(["user": "a", "cursor": Data("h1:x:1:d".utf8).base64EncodedString()])?.hasPrefix("cursor:") == true)
        #expect(message(["user": "a", "limit": "0"])?.hasPrefix("limit: limit \"0\" must be a whole number") == true)
        #expect(message(["since": "2026-06-01T00:00:00Z"]) == "user: name a user or a device (or both)")
        #expect(message(["user": "a", "outcome": "failed, throttled", "limit": "5"]) == nil)
    }

    @Test("a cursor survives its text form, device names with colons included")
    func cursorToken() {
        let cursor = HistoryCursor(at: Timestamp(millisecondsSince1970: 1_796_054_400_123), device: "ward:3/ipad", seq: 42)
        #expect(HistoryCursor(token: cursor.token) == cursor)
        #expect(cursor.token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(HistoryCursor(token: "") == nil)
    }
}
