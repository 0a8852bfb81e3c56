/// The `error.code` of a refusal body (`{"error": {"code", "message"}}`): every code the sync
/// server sends, shared by the server, which writes only these, and ``SyncClient``, which
/// switches on them. The raw value is the text on the wire; docs/sync-protocol.md § Status codes
/// and docs/openapi.yaml's `ErrorDetail.code` list the same codes.
///
/// ```swift
/// let refusal = SyncWire.error(from: response.body)
/// if refusal?.code == .gap, let expected = refusal?.expectedSeq { next = expected }
/// ```
///
/// A code this build does not know (a newer server's) reads as a ``SyncWire/ErrorBody`` whose
/// ``SyncWire/ErrorBody/code`` is `nil` and whose ``SyncWire/ErrorBody/wireCode`` keeps the
/// text, so a client still reports it and falls back on the HTTP status.
///
/// Each code comes with one status (``status``); the client acts on a code only when it comes
/// with that status, and otherwise on the status alone.
public enum SyncErrorCode: String, Sendable, CaseIterable {
    /// 400: the body or the query breaks the protocol. The client stops with
    /// ``SyncError/refused``: a client bug, never resent unchanged.
    case malformed
    /// 400: an uploaded event names another device than the path's. The client stops with
    /// ``SyncError/refused``.
    case foreignDevice = "foreign_device"
    /// 400: an uploaded event is dated more than the maximum clock skew after the server's
    /// clock. The client stops with ``SyncError/refused``; the batch is accepted once the clocks
    /// agree.
    case futureEvent = "future_event"
    /// 401: no bearer token, or an unknown or revoked one. The client stops with
    /// ``SyncError/unauthorized``.
    case unauthorized
    /// 401: the token was valid and its lifetime ended. The client stops with
    /// ``SyncError/tokenExpired``.
    case tokenExpired = "token_expired"
    /// 403: the token's role or device does not allow the request. The client stops with
    /// ``SyncError/forbidden``.
    case forbidden
    /// 404: no such endpoint, or the device is not enrolled. The client stops with
    /// ``SyncError/refused``.
    case notFound = "not_found"
    /// 405: a known path with another method (`Allow` lists those it takes). The client stops
    /// with ``SyncError/refused``.
    case methodNotAllowed = "method_not_allowed"
    /// 409 with `expected_seq`: the batch starts after the server's head. The client rewinds to
    /// `expected_seq` (``SyncError/refused`` after ``SyncLimits/maximumAttempts`` gaps in a row,
    /// ``SyncError/badResponse`` for an `expected_seq` outside the local log).
    case gap
    /// 409: the server holds a different record at a seq of the batch. The client stops with
    /// ``SyncError/fork`` and never resends.
    case fork
    /// 409: the batch contradicts a head the device signed and the server accepted. The client
    /// stops with ``SyncError/historyRewritten`` and never resends.
    case historyRewritten = "history_rewritten"
    /// 409: the batch's pseudonym key differs from the one the replica adopted (the device store
    /// was replaced). The client stops with ``SyncError/refused``.
    case keysChanged = "keys_changed"
    /// 409: a forget cannot rewrite a pruned replica (an admin's request, never a device's). The
    /// client stops with ``SyncError/refused``.
    case pruned
    /// 409: a new record's `prev` or `hash` does not follow from its content. The client stops
    /// with ``SyncError/chainBroken`` and never resends.
    case chainBroken = "chain_broken"
    /// 409: enrolment of a device already registered with another public key (an enrolment
    /// answer, never a sync run's; ``SyncError/refused`` if one ever came).
    case keyMismatch = "key_mismatch"
    /// 422: the batch's `signed_head` does not verify with the key registered at enrolment. The
    /// client stops with ``SyncError/badSignature``.
    case badSignature = "bad_signature"
    /// 422: the device registered a key but the batch carries no `signed_head`. The client
    /// stops with ``SyncError/badSignature``.
    case signatureRequired = "signature_required"
    /// 413: the body is over ``SyncLimits/maximumBodyBytes``. The client halves the batch; a
    /// single record that is too large stops it with ``SyncError/refused``.
    case tooLarge = "too_large"
    /// 415: a body sent without `Content-Type: application/json`. The client stops with
    /// ``SyncError/refused``.
    case unsupportedMediaType = "unsupported_media_type"
    /// 429 with `Retry-After: 1`: another upload of the device is in progress. The client waits
    /// and resends (``SyncError/unavailable`` after ``SyncLimits/maximumAttempts`` tries).
    case busy
    /// 429 with `Retry-After`: over a rate limit. The client waits and resends
    /// (``SyncError/unavailable`` after ``SyncLimits/maximumAttempts`` tries).
    case rateLimited = "rate_limited"
    /// 500: the server failed; the detail is in its operator's log. The client resends with
    /// back-off (``SyncError/unavailable`` after ``SyncLimits/maximumAttempts`` tries).
    case `internal`
    /// 503 with `Retry-After`: shutting down or short of a resource. The client waits and
    /// resends (``SyncError/unavailable`` after ``SyncLimits/maximumAttempts`` tries).
    case unavailable
    /// 431: more header fields or header bytes than the HTTP layer takes. Written by the HTTP
    /// layer (`HTTPServer`, which does not depend on this module, so it spells the code itself;
    /// a test pairs the two). The client stops with ``SyncError/refused``.
    case tooManyHeaders = "too_many_headers"

    /// The HTTP status the code comes with; the server derives every refusal's status from it.
    public var status: Int {
        switch self {
        case .malformed, .foreignDevice, .futureEvent: 400
        case .unauthorized, .tokenExpired: 401
        case .forbidden: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .gap, .fork, .historyRewritten, .keysChanged, .pruned, .chainBroken, .keyMismatch: 409
        case .tooLarge: 413
        case .unsupportedMediaType: 415
        case .badSignature, .signatureRequired: 422
        case .busy, .rateLimited: 429
        case .tooManyHeaders: 431
        case .internal: 500
        case .unavailable: 503
        }
    }
}
