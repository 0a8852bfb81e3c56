import Foundation
import OnboardingModel
import OnboardingStore

extension SyncServer {
    /// 100 characters: longer than any name a person types to find someone.
    static let maximumSearchCharacters = 100
    /// 20 users per answer by default, at most 100: a list to pick from, not an export.
    static let defaultSearchLimit = 20
    static let maximumSearchLimit = 100

    /// `GET /v1/users?search=TEXT&limit=N`: the users whose id or latest display name each
    /// folded word of `search` begins a word of (``SearchTerms``), in byte order of their ids.
    func searchUsers(_ request: SyncRequest) throws -> SyncResponse {
        let parameters = request.query
        if let unknown = parameters.keys.sorted().first(where: { !["search", "limit"].contains($0) }) {
            return failure(.malformed, "unknown query parameter \(unknown); this endpoint takes search, limit")
        }
        if let refusal = Self.searchRefusal(parameters["search"]) { return failure(.malformed, refusal) }
        let search = parameters["search"] ?? ""
        let limit: Int
        switch Self.boundedInteger(parameters["limit"], name: "limit", in: 1...Self.maximumSearchLimit, default: Self.defaultSearchLimit) {
        case .failure(let refusal): return refusal.response
        case .success(let value): limit = value
        }
        let found = try storage.searchUsers(SearchTerms.words(search), limit: limit)
        return json(200, SyncWire.encode(.object([.init("users", .array(found.map(\.jsonValue)))])))
    }

    /// Why `search` is no search (the 400's message), `nil` when it is one: 1–100 characters —
    /// Unicode scalars, as JSON Schema's `maxLength` counts them — none a control character.
    static func searchRefusal(_ search: String?) -> String? {
        guard let search, !search.isEmpty else {
            return "query parameter search is required: 1 to \(maximumSearchCharacters) characters of a user id or display name"
        }
        guard search.unicodeScalars.count <= maximumSearchCharacters else {
            return "query parameter search: at most \(maximumSearchCharacters) characters, got \(search.unicodeScalars.count)"
        }
        guard !search.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return "query parameter search must not contain control characters"
        }
        return nil
    }

    /// A whole number in `range` from a query parameter (absent: `fallback`; empty is no number,
    /// as the document's integer says), or the 400.
    static func boundedInteger(_ text: String?, name: String, in range: ClosedRange<Int>, default fallback: Int) -> Result<Int, Refusal> {
        guard let text else { return .success(fallback) }
        guard let value = Int(text), range.contains(value) else {
            let code = SyncErrorCode.malformed
            let body = SyncWire.errorBody(
                .init(
                    code: code,
                    message: "query parameter \(name): \(name) \(ErrorEcho.quoted(text)) must be a whole number from \(range.lowerBound) to \(range.upperBound)"
                ))
            return .failure(Refusal(response: SyncResponse(status: code.status, headers: ["content-type": SyncWire.contentType], body: body)))
        }
        return .success(value)
    }
}
