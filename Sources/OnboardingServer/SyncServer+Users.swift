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
        let parameters = SyncServer.query(request.path)
        if let unknown = parameters.keys.sorted().first(where: { !["search", "limit"].contains($0) }) {
            return failure(400, "malformed", "unknown query parameter \(unknown); this endpoint takes search, limit")
        }
        guard let search = parameters["search"], !search.isEmpty else {
            return failure(400, "malformed", "query parameter search is required: 1 to \(Self.maximumSearchCharacters) characters of a user id or display name")
        }
        guard search.count <= Self.maximumSearchCharacters else {
            return failure(400, "malformed", "query parameter search: at most \(Self.maximumSearchCharacters) characters, got \(search.count)")
        }
        guard !search.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return failure(400, "malformed", "query parameter search must not contain control characters")
        }
        let limit: Int
        switch Self.boundedInteger(parameters["limit"], name: "limit", in: 1...Self.maximumSearchLimit, default: Self.defaultSearchLimit) {
        case .failure(let refusal): return refusal.response
        case .success(let value): limit = value
        }
        let found = try storage.searchUsers(SearchTerms.words(search), limit: limit)
        return json(200, SyncWire.encode(.object([.init("users", .array(found.map(\.jsonValue)))])))
    }

    /// A whole number in `range` from a query parameter (absent or empty: `fallback`), or the 400.
    static func boundedInteger(_ text: String?, name: String, in range: ClosedRange<Int>, default fallback: Int) -> Result<Int, Refusal> {
        guard let text, !text.isEmpty else { return .success(fallback) }
        guard let value = Int(text), range.contains(value) else {
            let body = SyncWire.errorBody(.init(code: "malformed",
                                                message: "query parameter \(name): \(name) \(ErrorEcho.quoted(text)) must be a whole number from \(range.lowerBound) to \(range.upperBound)"))
            return .failure(Refusal(response: SyncResponse(status: 400, headers: ["content-type": SyncWire.contentType], body: body)))
        }
        return .success(value)
    }
}
