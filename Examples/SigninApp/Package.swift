// swift-tools-version: 6.1
import PackageDescription

// An app as a developer writes one: it depends on the repository by path (an app would use the
// repository's URL), adds the `OnboardingStore` product for the device side and, because this one
// also runs a sync server in-process to sync to, the `OnboardingServer` product.
let package = Package(
    name: "SigninApp",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "OnboardingStore", path: "../..")],
    targets: [
        .executableTarget(
            name: "SigninApp",
            dependencies: [
                .product(name: "OnboardingStore", package: "OnboardingStore"),
                .product(name: "OnboardingServer", package: "OnboardingStore")
            ])
    ],
    swiftLanguageModes: [.v6]
)
