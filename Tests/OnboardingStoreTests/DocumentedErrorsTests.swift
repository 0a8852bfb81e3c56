import Foundation
import Testing
@testable import OnboardingStore

/// Every error code an app can branch on is in the docs: `StoreError`'s in docs/store.md
/// § Errors, `SyncError`'s in the table of docs/sync-protocol.md § Errors in an app (and that
/// table names no code the library lacks).
@Suite struct DocumentedErrorsTests {
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs")

    /// The text of `page` from the heading `## title` (or `### title`) to the next heading of that level or above.
    static func section(_ title: String, of page: String) throws -> String {
        let text = try String(contentsOf: docs.appendingPathComponent(page), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == "## \(title)" || $0 == "### \(title)" }) else {
            Issue.record("\(page) has no section \(title)")
            return ""
        }
        let level = lines[start].prefix { $0 == "#" }.count
        let end =
            lines[(start + 1)...].firstIndex { line in
                let hashes = line.prefix { $0 == "#" }.count
                return hashes > 0 && hashes <= level && line.dropFirst(hashes).hasPrefix(" ")
            } ?? lines.endIndex
        return lines[start..<end].joined(separator: "\n")
    }

    @Test func everyStoreErrorCodeIsInStoreMdErrors() throws {
        let errors = try Self.section("Errors", of: "store.md")
        #expect(StoreError.Code.all.count >= 17)
        for code in StoreError.Code.all {
            #expect(errors.contains("`\(code)`"), "docs/store.md § Errors does not list \(code)")
        }
    }

    @Test func theSyncErrorTableListsEveryCodeAndNoOther() throws {
        let errors = try Self.section("Errors in an app", of: "sync-protocol.md")
        let lines = errors.split(separator: "\n")
        // The body of the table: the rows after its `| --- |` line.
        let body = lines.drop { !$0.hasPrefix("| ---") }.dropFirst().prefix { $0.hasPrefix("|") }
        let rows = body.map { row in
            String(row.dropFirst(3).prefix { $0 != "`" })
        }
        #expect(rows.sorted() == SyncError.Code.allCases.map(\.rawValue).sorted())
    }

    @Test func aSyncErrorMatchesByCodeAndItsConstant() {
        let error = SyncError.unauthorized.with("the token obt_… was revoked")
        #expect(error.code == .unauthorized)
        #expect(error == .unauthorized)
        #expect(error != .forbidden)
        #expect(error.message == "the token obt_… was revoked")
    }
}
