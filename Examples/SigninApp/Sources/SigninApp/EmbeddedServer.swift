import Foundation
import OnboardingServer

/// A sync server run inside the app's process on a free loopback port, as an embedder runs one:
/// a `SyncServer` on its data directory behind the HTTP listener.
final class EmbeddedServer: Sendable {
    let server: SyncServer
    private let http: HTTPServer

    init(dataDirectory: String) throws {
        server = try SyncServer(dataDirectory: dataDirectory)
        http = HTTPServer(host: "127.0.0.1", port: 0, limits: SyncHTTPHandler.limits, handler: SyncHTTPHandler(server: server))
        do { try http.start() } catch {
            server.close()
            throw error
        }
    }

    /// Where the device sends its batches.
    var url: URL { URL(string: "http://127.0.0.1:\(http.port)")! }

    func stop() {
        http.stop()
        server.close()
    }
}
