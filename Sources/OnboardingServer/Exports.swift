// An embedder writes one import: `import OnboardingServer` also brings the device store, the
// sync client and wire types (OnboardingStore) and the HTTP listener that serves a `SyncServer`
// (`HTTPServer(port:limits:handler:)` with `SyncHTTPHandler`).
@_exported import HTTPServer
@_exported import OnboardingStore
