// swift-tools-version: 6.1
import PackageDescription

// Every target, one line each; a target imports only targets on the lines above it. The diagram,
// what each module owns and must never do, and the append and sync paths: docs/architecture.md.
//   CLMDB, CSodium, CMicroHTTPD, CLibPQ  system libraries (pkg-config): LMDB, libsodium, libmicrohttpd, libpq
//   CTLS                                 C of ours on GnuTLS: the server's certificates, the client's TLS
//   LMDB, PostgreSQL, HTTPServer         the Swift wrappers of LMDB, libpq and libmicrohttpd; know no domain types
//   OnboardingModel                      events, their JSON form, the record codec and hash chain; pure (no I/O, no clock)
//   OnboardingProjections                pure folds of the log: lockout, session, users, history
//   OnboardingStore                      the device store on LMDB, and the sync client (Sync/); re-exports the two above
//   OnboardingImport                     JSONL and foreign logs, every line checked, then appended in bounded commits
//   OnboardingWorkload                   seeded workloads (honest traffic and attacks), the lockout effectiveness report; pure
//   OnboardingLab                        the lockout lab (docs/lab.md): logs replayed under many policies
//   OnboardingServer                     the reference sync server: the router and its storage seam (LMDB replicas or PostgreSQL)
//   OnboardingSimulation                 devices, network and server in one deterministic run (docs/testing.md)
//   CBaseline, CSQLite                   the benchmarks' baselines: the same LMDB writes in C, and SQLite
//   onboard, onboard-sim, onboard-bench  the command line, the simulation's runner, the benchmarks (Benchmarks/)
//   CSpawn, then TestSupport             shared by the test targets (Tests/), which come last
let package = Package(
    name: "OnboardingStore",
    platforms: [.macOS(.v15)],
    products: [
        // What an app adds: `import OnboardingStore` gives the store, the events, the projections'
        // public types and the sync client with its URLSession transport.
        .library(name: "OnboardingStore", targets: ["OnboardingStore"]),
        // For those who embed the sync server (and for FuzzTesting/, which fuzzes it).
        .library(name: "OnboardingServer", targets: ["OnboardingServer"]),
        // For FuzzTesting/, which fuzzes the foreign-log readers of `onboard import --from sshd|keycloak`.
        .library(name: "OnboardingImport", targets: ["OnboardingImport"]),
        .executable(name: "onboard", targets: ["onboard"]),
        .executable(name: "onboard-bench", targets: ["onboard-bench"]),
        .executable(name: "onboard-sim", targets: ["onboard-sim"])
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
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .target(name: "LMDB", dependencies: ["CLMDB"]),
        // libpq for the sync server's PostgreSQL storage: connections, a bounded pool, binary
        // parameters and results; knows no domain types.
        .target(name: "PostgreSQL", dependencies: ["CLibPQ"]),
        // The reusable HTTP layer for `onboard serve`; knows no domain types.
        // GnuTLS, which Debian's libmicrohttpd is built with (libgnutls28-dev): C, because its
        // certificate callback is.
        .target(name: "CTLS", linkerSettings: [.linkedLibrary("gnutls")]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "CTLS"]),
        .target(name: "OnboardingModel", dependencies: ["CSodium"]),
        .target(name: "OnboardingProjections", dependencies: ["OnboardingModel"]),
        // The device store, and the sync client (Sync/: the protocol's wire types and limits, one place
        // for client and server, the client, the agent and the transports). Re-exports the model and
        // the projections, so an app writes one import.
        .target(name: "OnboardingStore", dependencies: ["LMDB", "CTLS", "OnboardingModel", "OnboardingProjections"]),
        // JSONL import: checked in a streaming pass, then appended in bounded commits (CLI and bench).
        .target(name: "OnboardingImport", dependencies: ["OnboardingStore", "OnboardingModel"]),
        // Seeded, deterministic workloads (honest traffic and attacks) and the lockout effectiveness report; pure.
        .target(name: "OnboardingWorkload", dependencies: ["OnboardingModel", "OnboardingProjections"]),
        // The lockout lab (docs/lab.md): logs replayed under many policies, compared and swept.
        .target(name: "OnboardingLab", dependencies: ["OnboardingModel", "OnboardingProjections", "OnboardingStore"]),
        // The reference sync server: the router, and its storage behind one seam (ServerStorage):
        // LMDB replicas per device with an in-memory global lockout, or PostgreSQL (Postgres/).
        // Console/: the audit console's static files, served at /console (ConsoleFiles.swift).
        .target(
            name: "OnboardingServer",
            dependencies: [
                "OnboardingStore", "OnboardingProjections", "OnboardingModel", "LMDB", "HTTPServer",
                "PostgreSQL"
            ],
            resources: [.copy("Console")]),
        // The deterministic simulation of devices, network and server (docs/testing.md).
        .target(
            name: "OnboardingSimulation",
            dependencies: [
                "OnboardingServer", "OnboardingStore", "OnboardingModel",
                "OnboardingProjections", "OnboardingWorkload"
            ]),
        .executableTarget(name: "onboard-sim", dependencies: ["OnboardingSimulation"]),
        .executableTarget(
            name: "onboard",
            dependencies: [
                "OnboardingStore", "OnboardingImport", "LMDB", "OnboardingModel", "OnboardingProjections", "OnboardingServer", "HTTPServer",
                "OnboardingWorkload", "OnboardingLab"
            ]),
        // Helpers shared by every test target (temporary directories, child processes, loopback
        // clients, the PostgreSQL test database).
        // posix_spawn for tests' child processes (Tests/CSpawn/include/onboard_spawn.h says why).
        .target(name: "CSpawn", path: "Tests/CSpawn"),
        .target(name: "TestSupport", dependencies: ["OnboardingModel", "CSpawn", "PostgreSQL"], path: "Tests/TestSupport"),
        // Benchmarks (docs/benchmarks.md): the store against the same LMDB writes in C and against SQLite.
        // Not a dependency of any test target, so `swift test` never builds or runs them.
        .systemLibrary(
            name: "CSQLite",
            path: "Benchmarks/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "CBaseline", dependencies: ["CLMDB", "CSodium"], path: "Benchmarks/CBaseline"),
        .executableTarget(
            name: "onboard-bench",
            dependencies: [
                "OnboardingStore", "OnboardingImport", "OnboardingModel", "OnboardingProjections", "LMDB", "CBaseline", "CSQLite",
                "OnboardingServer", "HTTPServer", "PostgreSQL", "OnboardingLab"
            ],
            path: "Benchmarks/onboard-bench"),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB", "TestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"]),
        .testTarget(name: "PostgreSQLTests", dependencies: ["PostgreSQL", "TestSupport"]),
        .testTarget(name: "OnboardingModelTests", dependencies: ["OnboardingModel", "TestSupport"]),
        .testTarget(name: "OnboardingProjectionsTests", dependencies: ["OnboardingProjections", "OnboardingModel", "TestSupport"]),
        .testTarget(name: "OnboardingSyncTests", dependencies: ["OnboardingServer", "OnboardingStore", "OnboardingModel", "TestSupport"]),
        .testTarget(
            name: "OnboardingServerTests",
            dependencies: ["OnboardingServer", "OnboardingStore", "OnboardingModel", "OnboardingProjections", "PostgreSQL", "TestSupport"]),
        .testTarget(name: "OnboardingImportTests", dependencies: ["OnboardingImport", "OnboardingStore", "OnboardingModel", "TestSupport"]),
        .testTarget(name: "OnboardingStoreTests", dependencies: ["OnboardingStore", "LMDB", "OnboardingModel", "TestSupport"]),
        .testTarget(
            name: "OnboardingWorkloadTests", dependencies: ["OnboardingWorkload", "OnboardingModel", "OnboardingProjections", "OnboardingLab", "TestSupport"]),
        .testTarget(name: "OnboardingSimulationTests", dependencies: ["OnboardingSimulation", "TestSupport"]),
        .testTarget(name: "OnboardCLITests", dependencies: ["onboard", "OnboardingModel", "LMDB", "TestSupport"])
    ],
    swiftLanguageModes: [.v6]
)
