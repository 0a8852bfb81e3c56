// swift-tools-version: 6.1
import PackageDescription

// The fuzz targets, a package of their own so the main package's `swift build` and `swift test`
// never compile them with the sanitizers. Built and run by `FuzzTesting/run.sh` (docs/testing.md):
//   swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -enable-testing
// Each `Fuzz…` executable defines `LLVMFuzzerTestOneInput` and hands its entry point to libFuzzer.
// `make-fuzz-corpus` writes the seed corpus (`Corpus/<target>/`) and is built without sanitizers.
let package = Package(
    name: "FuzzTesting",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "OnboardingStore", path: "..")
    ],
    targets: [
        // Fixed keys, users and events shared by the targets and the corpus generator, so the
        // committed seeds and what a target rebuilds in memory are the same bytes.
        .target(
            name: "FuzzSupport",
            dependencies: [
                .product(name: "OnboardingStore", package: "OnboardingStore"), .product(name: "OnboardingServer", package: "OnboardingStore"),
                .product(name: "OnboardingImport", package: "OnboardingStore")
            ]),
        // libFuzzer's driver, declared for Swift; `-sanitize=fuzzer` links it.
        .systemLibrary(name: "CLibFuzzer"),
        // Hands a target's entry point to libFuzzer (see FuzzEntry.swift for why a target needs one).
        .target(name: "FuzzEntry", dependencies: ["CLibFuzzer"]),
        .executableTarget(name: "FuzzRecordCodec", dependencies: ["FuzzEntry", "FuzzSupport", .product(name: "OnboardingStore", package: "OnboardingStore")]),
        .executableTarget(name: "FuzzEventLine", dependencies: ["FuzzEntry", "FuzzSupport", .product(name: "OnboardingStore", package: "OnboardingStore")]),
        .executableTarget(
            name: "FuzzUploadBody",
            dependencies: [
                "FuzzEntry", "FuzzSupport", .product(name: "OnboardingStore", package: "OnboardingStore"),
                .product(name: "OnboardingServer", package: "OnboardingStore")
            ]),
        .executableTarget(
            name: "FuzzRouter",
            dependencies: [
                "FuzzEntry", "FuzzSupport", .product(name: "OnboardingStore", package: "OnboardingStore"),
                .product(name: "OnboardingServer", package: "OnboardingStore")
            ]),
        .executableTarget(name: "FuzzLockoutPolicy", dependencies: ["FuzzEntry", "FuzzSupport", .product(name: "OnboardingStore", package: "OnboardingStore")]),
        .executableTarget(name: "FuzzServerAnswer", dependencies: ["FuzzEntry", "FuzzSupport", .product(name: "OnboardingStore", package: "OnboardingStore")]),
        .executableTarget(
            name: "FuzzLogLine",
            dependencies: [
                "FuzzEntry", "FuzzSupport", .product(name: "OnboardingStore", package: "OnboardingStore"),
                .product(name: "OnboardingImport", package: "OnboardingStore")
            ]),
        .executableTarget(
            name: "FuzzIdentityLog",
            dependencies: [
                "FuzzEntry", "FuzzSupport", .product(name: "OnboardingStore", package: "OnboardingStore"),
                .product(name: "OnboardingImport", package: "OnboardingStore")
            ]),
        .executableTarget(name: "make-fuzz-corpus", dependencies: ["FuzzSupport", .product(name: "OnboardingStore", package: "OnboardingStore")])
    ],
    swiftLanguageModes: [.v6]
)
