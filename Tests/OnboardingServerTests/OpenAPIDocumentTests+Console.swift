import Foundation
import OnboardingModel
@testable import OnboardingServer
import Testing

/// The console endpoints' patterns in docs/openapi.yaml against the server's own rules.
extension OpenAPIDocumentTests {
    /// Samples around a rule on characters: one of every scalar, and the lengths at and past
    /// `maximum` in one- to four-byte scalars.
    static func characterSamples(maximum: Int) -> [String] {
        var samples = allScalars.map { "a" + String($0) }
        for unit in ["x", "é", "€", "😀"] {
            samples += [String(repeating: unit, count: maximum), String(repeating: unit, count: maximum + 1)]
        }
        // A character of two scalars counts as two, as JSON Schema counts them.
        samples += [String(repeating: "e\u{301}", count: maximum / 2), String(repeating: "e\u{301}", count: maximum / 2 + 1), ""]
        return samples
    }

    @Test func theSearchPatternIsExactlyTheServersRule() throws {
        let pattern = try Self.pattern(of: "UserSearch")
        for sample in Self.characterSamples(maximum: SyncServer.maximumSearchCharacters) {
            #expect(Self.matches(pattern, sample) == (SyncServer.searchRefusal(sample) == nil), "\(sample.debugDescription.prefix(40))")
        }
    }

    @Test func theReasonPatternIsExactlyTheServersRule() throws {
        let document = try Self.document()
        let block = try #require(document.range(of: "    LockoutClearRequest:").map { String(document[$0.lowerBound...].prefix(900)) })
        let line = try #require(block.split(separator: "\n").first { $0.contains("pattern: '") })
        let text = String(line.drop { $0 == " " }.dropFirst("pattern: '".count).dropLast()).replacingOccurrences(of: "''", with: "'")
        let pattern = try NSRegularExpression(pattern: String(text.dropLast()) + #"\z"#)
        for sample in Self.characterSamples(maximum: ServerAction.maximumReasonCharacters) {
            #expect(Self.matches(pattern, sample) == (ServerAction.reasonRefusal(sample) == nil), "\(sample.debugDescription.prefix(40))")
        }
    }

    @Test func theTokenIDPatternIsExactlyTheServersRule() throws {
        let pattern = try Self.pattern(of: "TokenID")
        let id = "0123456789abcdef"
        var samples = [id, id.uppercased(), String(id.dropLast()), id + "0", "", id + "\n", "g" + id.dropFirst()]
        samples += Self.allScalars.prefix(0x3100).map { String(id.dropLast()) + String($0) }
        for sample in samples {
            #expect(Self.matches(pattern, sample) == SyncServer.isTokenID(sample), "\(sample.debugDescription)")
        }
        #expect(Self.matches(pattern, TokenStore.tokenID(of: TokenStore.newToken())))
    }

    @Test func theOrderPatternIsExactlyTheServersRule() throws {
        let pattern = try Self.pattern(of: "HistoryOrder")
        var samples = ["", "oldest", "newest", "Newest", "OLDEST", " oldest", "newest ", "old", "newestnewest", "oldest,newest"]
        samples += Self.allScalars.prefix(0x3100).map { "newest" + String($0) }
        for sample in samples {
            #expect(Self.matches(pattern, sample) == (SyncServer.HistoryOrder(parameter: sample) != nil), "\(sample.debugDescription)")
        }
    }
}
