import Foundation
import OnboardingStore

extension SyncServer {
    /// The headers every answer carries, the console's files and the API's JSON alike: the page
    /// may load scripts, styles and images only from this server and talk only to it, has no
    /// inline script or style (no `'unsafe-inline'`), cannot be framed, posts no form, and sends
    /// no referrer; no answer is sniffed into another type.
    public static let securityHeaders: [String: String] = [
        "content-security-policy": contentSecurityPolicy,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer"
    ]

    /// The console's Content-Security-Policy (docs/sync-protocol.md § The audit console).
    public static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

    /// Adds ``securityHeaders`` (and, to an API answer, `Cache-Control: no-store`: histories and
    /// tokens must not be kept by a browser or a proxy) where the answer does not set them.
    static func addSecurityHeaders(to response: inout SyncResponse) {
        for (name, value) in securityHeaders where response.headers[name] == nil { response.headers[name] = value }
        if response.headers["cache-control"] == nil { response.headers["cache-control"] = "no-store" }
    }

    /// `GET /console/<file>`: the file from ``ConsoleFiles``, the page for `/console/`; 404 for
    /// anything else. No token: the page holds nothing secret (an auditor types a token into it).
    func consoleFile(_ encoded: String) -> SyncResponse {
        let console = ConsoleFiles.shared
        let name = encoded.isEmpty ? "index.html" : SyncPaths.percentDecoded(encoded) ?? ""
        guard let file = console.file(name) else {
            return failure(.notFound, console.problem ?? "no such file of the console; the console is at /console/")
        }
        // Revalidated on every load: a new server version's page never runs with old scripts.
        return SyncResponse(status: 200, headers: ["content-type": file.contentType, "cache-control": "no-cache"], body: file.bytes)
    }
}
