import Foundation
import Testing
import OnboardingSync

@Suite struct URLSessionTransportTests {
    @Test func anUnreachableServerThrowsInsteadOfAnsweringAStatus() async throws {
        // Port 9 (discard) on the loopback address: nothing listens, the connection is refused.
        let transport = URLSessionTransport(baseURL: URL(string: "http://127.0.0.1:9/")!, timeout: .seconds(5))
        await #expect(throws: (any Error).self) {
            _ = try await transport.send(SyncRequest(method: "GET", path: SyncPaths.health))
        }
    }
}
