import OnboardingStore

/// The transport at the bottom of a simulated device's stack: hands every request to the
/// device's ``SimulatedLink``, where it waits for the simulated network.
struct LinkTransport: SyncTransport {
    let link: SimulatedLink

    func send(_ request: SyncRequest) async throws -> SyncResponse {
        try await link.send(request)
    }
}
