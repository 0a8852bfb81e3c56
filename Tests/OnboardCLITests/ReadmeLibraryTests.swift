import Foundation
import Testing

/// The README's library section, taken from README.md itself: its `Package.swift` and its Swift
/// snippet are written into a consumer package that depends on this repository by path (as
/// `../OnboardingStore`, the name the README uses), built with `-warnings-as-errors` and run. A
/// README that no longer compiles, or a snippet that traps, fails here.
@Suite(.heavy) struct ReadmeLibraryTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The ```swift blocks of README.md, in order.
    static func swiftBlocks() throws -> [String] {
        let text = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        var blocks: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n") + "\n")
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The `swift` driver the tests run under (CI puts the toolchain on PATH).
    static func swift() -> String {
        let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/swift" }
            + ["/opt/swift/usr/bin/swift"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/opt/swift/usr/bin/swift"
    }

    @Test func theReadmesPackageLinesAndSnippetBuildAndRun() async throws {
        let blocks = try Self.swiftBlocks()
        let manifest = try #require(blocks.first { $0.hasPrefix("// swift-tools-version") }, "README.md shows no Package.swift")
        let program = try #require(blocks.first { $0.contains("import OnboardingStore") }, "README.md shows no library snippet")
        #expect(manifest.contains(#".package(path: "../OnboardingStore")"#))

        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // `../OnboardingStore` from the app's directory is this repository, whatever its checkout is called.
        try FileManager.default.createSymbolicLink(atPath: directory.appending("OnboardingStore"),
                                                   withDestinationPath: Self.repository.path)
        let app = directory.appending("SigninApp")
        try FileManager.default.createDirectory(atPath: app + "/Sources/SigninApp", withIntermediateDirectories: true)
        try manifest.write(toFile: app + "/Package.swift", atomically: true, encoding: .utf8)
        try program.write(toFile: app + "/Sources/SigninApp/main.swift", atomically: true, encoding: .utf8)

        let build = try await OwnThread.run {
            try Tool.run(Self.swift(), ["build", "--package-path", app, "-Xswiftc", "-warnings-as-errors"])
        }
        #expect(build.status == 0, "the README's library section does not build:\n\(build.output.suffix(4000))")
        guard build.status == 0 else { return }

        // Run it where it creates its store, and check what the snippet's comment says it prints.
        let run = try await OwnThread.run {
            try Tool.run("/bin/sh", ["-c", "cd \"$1\" && exec \"$2\"", "sh", directory.path, app + "/.build/debug/SigninApp"])
        }
        #expect(run.status == 0, "\(run.output)")
        #expect(run.stdout.hasPrefix("1 [") && run.stdout.contains("Invalid password"), "\(run.stdout)")
        #expect(FileManager.default.fileExists(atPath: directory.appending("onboarding.lmdb")))
    }
}
