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
        .executable(name: "onboard", targets: ["onboard"]),
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
        .target(name: "LMDB", dependencies: ["CLMDB"]),
        .target(name: "OnboardingModel", dependencies: ["CSodium"]),
        .target(name: "OnboardingProjections", dependencies: ["OnboardingModel"]),
        .target(name: "OnboardingStore", dependencies: ["LMDB", "OnboardingModel", "OnboardingProjections"]),
        .executableTarget(name: "onboard", dependencies: ["OnboardingStore", "OnboardingModel", "OnboardingProjections"]),
        // Helpers shared by every test target (temporary directories, a seeded generator).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB", "TestSupport"]),
        .testTarget(name: "OnboardingModelTests", dependencies: ["OnboardingModel", "TestSupport"]),
        .testTarget(name: "OnboardingProjectionsTests", dependencies: ["OnboardingProjections", "OnboardingModel", "TestSupport"]),
        .testTarget(name: "OnboardingStoreTests", dependencies: ["OnboardingStore", "LMDB", "OnboardingModel", "TestSupport"]),
        .testTarget(name: "OnboardCLITests", dependencies: ["onboard", "OnboardingModel", "LMDB", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
