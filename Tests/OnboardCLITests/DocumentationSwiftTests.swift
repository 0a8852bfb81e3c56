import Foundation
import Testing
import TestSupport

/// Every ```swift block of README.md, docs/*.md and the DocC articles (Sources/*/*.docc/*.md),
/// taken from the files themselves, is compiled in a consumer package that depends on this
/// repository by path (as `../OnboardingStore`, the name the README uses), with the README's own
/// `Package.swift` lines and `-warnings-as-errors`:
/// a doc whose example no longer compiles fails here, naming the file and line. The README's
/// library snippet is also run, and what its comments say it prints is checked.
///
/// Every block is a whole program (its imports, its store): a reader can paste it and build it.
@Suite(.heavy, .slow) struct DocumentationSwiftTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// One ```swift block: where it is, and its text.
    struct Block {
        /// Relative to the repository, e.g. `docs/store.md`.
        var file: String
        /// The line of the block's first code line (after the fence), from 1.
        var line: Int
        var text: String

        var isManifest: Bool { text.hasPrefix("// swift-tools-version") }
    }

    /// The ```swift blocks of `file`, in order.
    static func swiftBlocks(in file: String) throws -> [Block] {
        let text = try String(contentsOf: repository.appendingPathComponent(file), encoding: .utf8)
        var blocks: [Block] = []
        var current: (line: Int, lines: [Substring])?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if current == nil, line == "```swift" {
                current = (index + 2, [])
            } else if let open = current, line == "```" {
                blocks.append(Block(file: file, line: open.line, text: open.lines.joined(separator: "\n") + "\n"))
                current = nil
            } else {
                current?.lines.append(line)
            }
        }
        return blocks
    }

    /// README.md's blocks, then those of every page in docs/, by name, then those of the DocC
    /// catalogs' articles (`Sources/<Module>/<Module>.docc/*.md`), by path.
    static func allBlocks() throws -> [Block] {
        let pages = try FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted()
        return try swiftBlocks(in: "README.md") + pages.flatMap { try swiftBlocks(in: "docs/\($0)") }
            + catalogPages().flatMap { try swiftBlocks(in: $0) }
    }

    /// The articles of every DocC catalog under Sources/, relative to the repository, sorted.
    static func catalogPages() throws -> [String] {
        let fileManager = FileManager.default
        let sources = repository.appendingPathComponent("Sources").path
        var pages: [String] = []
        for module in try fileManager.contentsOfDirectory(atPath: sources) {
            let catalogs = (try? fileManager.contentsOfDirectory(atPath: "\(sources)/\(module)"))?.filter { $0.hasSuffix(".docc") } ?? []
            for catalog in catalogs {
                let directory = "Sources/\(module)/\(catalog)"
                let articles = try fileManager.contentsOfDirectory(atPath: repository.appendingPathComponent(directory).path)
                pages += articles.filter { $0.hasSuffix(".md") }.map { "\(directory)/\($0)" }
            }
        }
        return pages.sorted()
    }

    /// The `swift` driver the tests run under (CI puts the toolchain on PATH).
    static func swift() -> String {
        let candidates =
            (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/swift" }
            + ["/opt/swift/usr/bin/swift"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/opt/swift/usr/bin/swift"
    }

    /// A target name for a block: `Doc_store_md_61`.
    static func targetName(_ block: Block) -> String {
        "Doc_" + block.file.replacingOccurrences(of: "docs/", with: "").map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
            + "_\(block.line)"
    }

    /// Compiler diagnostics about `Sources/<target>/main.swift:LINE:` rewritten to the doc's own
    /// file and line, so a failure says which example to fix.
    static func mapDiagnostics(_ output: String, blocks: [String: Block]) -> String {
        output.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            for (target, block) in blocks {
                guard let range = line.range(of: "Sources/\(target)/main.swift:") else { continue }
                let rest = line[range.upperBound...]
                guard let number = Int(rest.prefix { $0.isNumber }) else { continue }
                return "\(block.file):\(block.line + number - 1):" + rest.drop { $0.isNumber }.dropFirst()
            }
            return String(line)
        }.joined(separator: "\n")
    }

    /// What only a sync server's replicas use, one use per line: an app that writes any of them
    /// must not compile (each is `package`, or, for claimed seqs, not an overload an app sees).
    static let replicaPlumbing = [
        "_ = store.pseudonymKeyForSync",
        "_ = store.liveKeys(for: [])",
        "_ = try store.sealedSections(for: records)",
        "try store.adoptKeys(pseudonymKey: key, userKeys: [:])",
        "store.clearPendingKeys()",
        "_ = store.checkingSeal(for: events[0])",
        "_ = try store.syncKeys(for: records)",
        "_ = try store.syncCursor()",
        "try store.setSyncCursor(1)",
        "_ = try store.pinnedServerKey()",
        "try store.recordSignedHead(head)",
        "try store.recordSigningPublicKey(publicKey)",
        "_ = try store.appendBlocking(events, claimedSeqs: [nil])",
        "_ = store.observeAppends { _ in }",
        "options.maintainProjections = false",
        "options.signsHeads = false"
    ]

    /// Type-checks, as the app's module, a file that uses each piece of ``replicaPlumbing``, and
    /// expects an error on every one of those lines.
    func checkReplicaPlumbingIsNotPublic(modules: String, in directory: TemporaryDirectory) throws {
        let header = [
            "import Foundation",
            "import OnboardingStore",
            "func probe(_ store: OnboardingStore, records: [Record], events: [Event], key: SecretKey, head: SignedHead, publicKey: SigningPublicKey) throws {",
            "    var options = OnboardingStore.Options()",
            "    options.lockoutPolicy = .mediawiki"
        ]
        let source = (header + Self.replicaPlumbing.map { "    " + $0 } + ["}", ""]).joined(separator: "\n")
        let file = directory.appending("probe.swift")
        try source.write(toFile: file, atomically: true, encoding: .utf8)
        let swiftc = (Self.swift() as NSString).deletingLastPathComponent + "/swiftc"
        let result = try Tool.run(
            swiftc,
            [
                "-typecheck", "-I", modules,
                "-I", Self.repository.appendingPathComponent("Sources/CLMDB").path,
                "-I", Self.repository.appendingPathComponent("Sources/CSodium").path,
                "-I", Self.repository.appendingPathComponent("Sources/CTLS/include").path, file
            ])
        #expect(result.status != 0)
        for (index, use) in Self.replicaPlumbing.enumerated() {
            let line = header.count + index + 1
            // Refused for its access (or, for claimed seqs, as an overload an app does not see),
            // not for some other mistake in the probe.
            let errors = result.output.split(separator: "\n").filter { $0.contains("probe.swift:\(line):") && $0.contains("error:") }
            #expect(
                !errors.isEmpty && errors.allSatisfy { $0.contains("'package' protection level") || $0.contains("extra argument 'claimedSeqs'") },
                "an app can still write `\(use)`:\n\(result.output.suffix(3000))")
        }
        // The probe's own setup is public: its first lines type-check.
        for line in 1...header.count {
            #expect(!result.output.contains("probe.swift:\(line):"), "\(result.output.suffix(2000))")
        }
    }

    @Test func everyBlockIsAWholeProgramOrTheManifest() async throws {
        try await onOwnThread {
            let blocks = try Self.allBlocks()
            // README: the manifest and the snippet; store.md, projections.md, lockout.md, sync-protocol.md.
            #expect(blocks.count >= 8, "found only \(blocks.count) swift blocks")
            // The DocC articles (Sources/OnboardingStore/OnboardingStore.docc) are compiled too.
            #expect(
                blocks.contains { $0.file.hasPrefix("Sources/OnboardingStore/OnboardingStore.docc/") },
                "no swift block found in the OnboardingStore DocC catalog")
            for block in blocks where !block.isManifest {
                #expect(
                    block.text.contains("import OnboardingStore"),
                    "\(block.file):\(block.line): a swift block must be a whole program (import OnboardingStore, open its store)")
            }
        }
    }

    @Test func theReadmeAndTheDocsCompileAndTheReadmeSnippetRuns() async throws {
        let readme = try Self.swiftBlocks(in: "README.md")
        let manifest = try #require(readme.first { $0.isManifest }, "README.md shows no Package.swift")
        let program = try #require(readme.first { $0.text.contains("import OnboardingStore") }, "README.md shows no library snippet")
        #expect(manifest.text.contains(#".package(path: "../OnboardingStore")"#))
        #expect(manifest.text.contains(#".product(name: "OnboardingStore", package: "OnboardingStore")"#))
        // One product: the README's app needs no other.
        #expect(manifest.text.components(separatedBy: ".product(").count == 2, "the README's Package.swift should add one product")
        let docs = try Self.allBlocks().filter { !$0.isManifest && !($0.file == program.file && $0.line == program.line) }
        let targets = Dictionary(uniqueKeysWithValues: docs.map { (Self.targetName($0), $0) })

        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // `../OnboardingStore` from the app's directory is this repository, whatever its checkout is called.
        try FileManager.default.createSymbolicLink(
            atPath: directory.appending("OnboardingStore"),
            withDestinationPath: Self.repository.path)
        let app = directory.appending("SigninApp")
        try FileManager.default.createDirectory(atPath: app + "/Sources/SigninApp", withIntermediateDirectories: true)
        try program.text.write(toFile: app + "/Sources/SigninApp/main.swift", atomically: true, encoding: .utf8)
        // The README's manifest as it is, with one more executable target per doc block.
        var lines = targets.keys.sorted().map { name in
            #"        .executableTarget(name: "\#(name)", dependencies: [.product(name: "OnboardingStore", package: "OnboardingStore")]),"#
        }
        lines.insert("    targets: [", at: 0)
        #expect(manifest.text.contains("    targets: [\n"))
        let extended = manifest.text.replacingOccurrences(of: "    targets: [\n", with: lines.joined(separator: "\n") + "\n")
        try extended.write(toFile: app + "/Package.swift", atomically: true, encoding: .utf8)
        for (name, block) in targets {
            try FileManager.default.createDirectory(atPath: app + "/Sources/\(name)", withIntermediateDirectories: true)
            try block.text.write(toFile: app + "/Sources/\(name)/main.swift", atomically: true, encoding: .utf8)
        }

        let build = try await OwnThread.run {
            try Tool.run(Self.swift(), ["build", "--package-path", app, "-Xswiftc", "-warnings-as-errors"])
        }
        #expect(
            build.status == 0,
            "a Swift block in the README or docs/ does not build:\n\(Self.mapDiagnostics(String(build.output.suffix(6000)), blocks: targets))")
        guard build.status == 0 else { return }

        try checkReplicaPlumbingIsNotPublic(modules: app + "/.build/debug/Modules", in: directory)

        // Run the README's snippet where it creates its store, and check what its comments say it prints.
        let run = try await OwnThread.run {
            try Tool.run("/bin/sh", ["-c", "cd \"$1\" && exec \"$2\"", "sh", directory.path, app + "/.build/debug/SigninApp"])
        }
        #expect(run.status == 0, "\(run.output)")
        #expect(run.stdout.hasPrefix("1 [") && run.stdout.contains("Invalid password"), "\(run.stdout)")
        #expect(FileManager.default.fileExists(atPath: directory.appending("onboarding.lmdb")))
    }
}
