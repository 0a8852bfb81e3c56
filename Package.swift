// swift-tools-version: 6.1
import PackageDescription

// Dependency direction points down (DESIGN.md §2):
//   onboard (CLI) → OnboardingStore → LMDB → CLMDB
//                                 ↘ OnboardingModel → CSodium
// The model is pure (no I/O, no clock); the LMDB wrapper knows no domain types.
let package = Package(
    name: "OnboardingStore",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OnboardingModel", targets: ["OnboardingModel"]),
        .library(name: "OnboardingProjections", targets: ["OnboardingProjections"]),
        .library(name: "OnboardingStore", targets: ["OnboardingStore"]),
        .library(name: "LMDB", targets: ["LMDB"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        // For FuzzTesting/, a package of its own that fuzzes the sync wire format and the server.
        .library(name: "OnboardingSync", targets: ["OnboardingSync"]),
        .library(name: "OnboardingServer", targets: ["OnboardingServer"]),
        .executable(name: "onboard", targets: ["onboard"]),
        .executable(name: "onboard-bench", targets: ["onboard-bench"]),
        .executable(name: "onboard-sim", targets: ["onboard-sim"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        .target(name: "LMDB", dependencies: ["CLMDB"]),
        // The reusable HTTP layer for `onboard serve`; knows no domain types.
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),
        .target(name: "OnboardingModel", dependencies: ["CSodium"]),
        .target(name: "OnboardingProjections", dependencies: ["OnboardingModel"]),
        .target(name: "OnboardingStore", dependencies: ["LMDB", "OnboardingModel", "OnboardingProjections"]),
        // JSONL import: checked in a streaming pass, then appended in bounded commits (CLI and bench).
        .target(name: "OnboardingImport", dependencies: ["OnboardingStore", "OnboardingModel"]),
        // Seeded, deterministic workloads (honest traffic and attacks) and the lockout effectiveness report; pure.
        .target(name: "OnboardingWorkload", dependencies: ["OnboardingModel", "OnboardingProjections"]),
        // The sync protocol's wire types and limits (one place for client and server) and the client.
        .target(name: "OnboardingSync", dependencies: ["OnboardingModel", "OnboardingStore", "OnboardingProjections"]),
        // The reference sync server: routes, token store, per-device replicas, global lockout.
        .target(name: "OnboardingServer", dependencies: ["OnboardingSync", "OnboardingStore", "OnboardingProjections", "OnboardingModel", "LMDB", "HTTPServer"]),
        // The deterministic simulation of devices, network and server (docs/testing.md).
        .target(name: "OnboardingSimulation", dependencies: ["OnboardingServer", "OnboardingSync", "OnboardingStore", "OnboardingModel",
                                                             "OnboardingProjections", "OnboardingWorkload"]),
        .executableTarget(name: "onboard-sim", dependencies: ["OnboardingSimulation"]),
        .executableTarget(name: "onboard", dependencies: ["OnboardingStore", "OnboardingImport", "LMDB", "OnboardingModel", "OnboardingProjections", "OnboardingSync", "OnboardingServer", "HTTPServer", "OnboardingWorkload"]),
        // Helpers shared by every test target (temporary directories, a seeded generator).
        // posix_spawn for tests' child processes (Tests/CSpawn/include/onboard_spawn.h says why).
        .target(name: "CSpawn", path: "Tests/CSpawn"),
        .target(name: "TestSupport", dependencies: ["OnboardingModel", "CSpawn"], path: "Tests/TestSupport"),
        // Benchmarks (issue 5): the store against the same LMDB writes in C and against SQLite.
        // Not a dependency of any test target, so `swift test` never builds or runs them.
        .systemLibrary(
            name: "CSQLite",
            path: "Benchmarks/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "CBaseline", dependencies: ["CLMDB", "CSodium"], path: "Benchmarks/CBaseline"),
        .executableTarget(name: "onboard-bench",
                          dependencies: ["OnboardingStore", "OnboardingImport", "OnboardingModel", "OnboardingProjections", "LMDB", "CBaseline", "CSQLite",
                                         "OnboardingSync", "OnboardingServer", "HTTPServer"],
                          path: "Benchmarks/onboard-bench"),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB", "TestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"]),
        .testTarget(name: "OnboardingModelTests", dependencies: ["OnboardingModel", "TestSupport"]),
        .testTarget(name: "OnboardingProjectionsTests", dependencies: ["OnboardingProjections", "OnboardingModel", "TestSupport"]),
        .testTarget(name: "OnboardingSyncTests", dependencies: ["OnboardingSync", "OnboardingServer", "OnboardingStore", "OnboardingModel", "TestSupport"]),
        .testTarget(name: "OnboardingServerTests", dependencies: ["OnboardingServer", "OnboardingSync", "OnboardingStore", "OnboardingModel", "OnboardingProjections", "TestSupport"]),
        .testTarget(name: "OnboardingImportTests", dependencies: ["OnboardingImport", "OnboardingStore", "OnboardingModel", "TestSupport"]),
        .testTarget(name: "OnboardingStoreTests", dependencies: ["OnboardingStore", "LMDB", "OnboardingModel", "TestSupport"]),
        .testTarget(name: "OnboardingWorkloadTests", dependencies: ["OnboardingWorkload", "OnboardingModel", "OnboardingProjections", "TestSupport"]),
        .testTarget(name: "OnboardingSimulationTests", dependencies: ["OnboardingSimulation", "TestSupport"]),
        .testTarget(name: "OnboardCLITests", dependencies: ["onboard", "OnboardingModel", "LMDB", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
