import Foundation
import HTTPServer
import Testing
import OnboardingModel
@testable import OnboardingStore

/// ``SyncErrorCode`` is the one list of refusal codes: these tests fail when a code is missing
/// from the documents, when the HTTP layer (which spells its codes itself) sends one the list
/// lacks, or when the client does not act on a code as ``SyncClient/handling(of:)`` says.
@Suite struct SyncErrorCodeTests {
    static func document(_ name: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("docs/\(name)"), encoding: .utf8)
    }

    @Test func everyCodeIsInTheProtocolDocument() throws {
        let text = try Self.document("sync-protocol.md")
        for code in SyncErrorCode.allCases {
            #expect(text.contains("`\(code.rawValue)`"), "docs/sync-protocol.md does not name `\(code.rawValue)`")
        }
    }

    @Test func theOpenAPIErrorCodeEnumListsExactlyTheCodes() throws {
        let lines = try Self.document("openapi.yaml").split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex(of: "    ErrorDetail:"), "docs/openapi.yaml has no ErrorDetail schema")
        let line = try #require(
            lines[start...].first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("enum: [") },
            "ErrorDetail has no code enum")
        let listed = line.trimmingCharacters(in: .whitespaces).dropFirst("enum: [".count).dropLast()
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(Set(listed) == Set(SyncErrorCode.allCases.map(\.rawValue)))
        #expect(listed.count == SyncErrorCode.allCases.count, "a code listed twice")
    }

    @Test func theHTTPLayersCodesAreCodesWithTheirStatus() {
        for status in [400, 413, 431, 500, 503] {
            let code = SyncWire.error(from: HTTPResponse.error(status: status, "refused by the HTTP layer").body)?.code
            #expect(code?.status == status, "the HTTP layer's code for \(status) is not a SyncErrorCode of that status")
        }
    }

    @Test func theWireBytesAreTheRawValue() {
        for code in SyncErrorCode.allCases {
            let body = SyncWire.errorBody(.init(code: code, message: "why"))
            #expect(String(decoding: body, as: UTF8.self) == #"{"error":{"code":"\#(code.rawValue)","message":"why"}}"#)
            let read = SyncWire.error(from: body)
            #expect(read?.code == code && read?.wireCode == code.rawValue)
        }
    }

    @Test func aCodeFromANewerServerIsKeptAndEndsTheRunByItsStatus() async throws {
        let body = Array(#"{"error":{"code":"moon_phase","message":"not tonight"}}"#.utf8)
        let read = try #require(SyncWire.error(from: body))
        #expect(read.code == nil && read.wireCode == "moon_phase" && read.description == "moon_phase: not tonight")

        let error = try await Self.firstUploadAnswered(SyncResponse(status: 409, headers: ["content-type": SyncWire.contentType], body: body))
            .failure
        #expect(error?.code == .refused)
        #expect(error?.message.contains("409 (moon_phase: not tonight)") == true, "\(error?.message ?? "")")
    }

    /// Every code, sent with its status to the first upload, does to the run what the client's
    /// handling of it says.
    @Test(arguments: SyncErrorCode.allCases)
    func theClientActsOnEveryCode(code: SyncErrorCode) async throws {
        var headers = ["content-type": SyncWire.contentType]
        if code.status == 429 || code.status == 503 { headers["retry-after"] = "0" }
        let body = SyncWire.errorBody(.init(code: code, message: "scripted \(code.rawValue)", expectedSeq: code == .gap ? 1 : nil))
        let run = try await Self.firstUploadAnswered(SyncResponse(status: code.status, headers: headers, body: body))
        switch SyncClient.handling(of: code) {
        case .end(let ending):
            #expect(run.failure?.code == ending, "\(code.rawValue): \(run.failure?.message ?? "the run did not fail")")
        case .rewind:
            #expect(run.summary?.rewinds == 1 && run.summary?.acknowledgedSeq == 10)
        case .halveBatch:
            #expect(run.summary?.acknowledgedSeq == 10 && run.uploadSizes.prefix(2) == [4, 2], "\(run.uploadSizes)")
        case .retry:
            #expect(run.summary?.retries == 1 && run.summary?.acknowledgedSeq == 10)
        }
    }

    struct Run {
        var summary: SyncSummary?
        var failure: SyncError?
        var uploadSizes: [Int]
    }

    /// A run of a 10-record store in batches of 4 against an honest server whose answer to the
    /// first upload is `answer`.
    static func firstUploadAnswered(_ answer: SyncResponse) async throws -> Run {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try SyncFixture.openStore(in: directory)
        defer { store.close() }
        try await SyncFixture.append(10, to: store)
        let server = FakeSyncServer()
        // Request 1 is the cursor, request 2 the first upload.
        let transport = ScriptedTransport(wrapping: InMemoryTransport { server.handle($0) }) { number, _ in
            number == 2 ? .answer(answer) : .forward
        }
        let client = SyncClient(store: store, transport: transport, token: SyncFixture.token, batchEvents: 4, sleep: { _ in }, seed: 1)
        var run = Run(uploadSizes: [])
        do { run.summary = try await client.run() } catch { run.failure = error }
        run.uploadSizes = transport.requests.filter { $0.method == "POST" }.map { (try? SyncWire.upload(from: $0.body).records.count) ?? 0 }
        return run
    }
}
