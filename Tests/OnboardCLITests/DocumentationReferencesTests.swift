import Foundation
import Testing
import TestSupport

/// The repository's text points only at what a reader of the repository can open: no design or
/// style notes kept outside it, no seed briefs, no numbered issues of a tracker it does not ship.
/// What those said is in the repository's own docs (docs/events.md, docs/lockout.md, …), and a
/// comment cites the doc and section instead. And docs/architecture.md names every target of
/// `Package.swift`, and its relative links lead to pages and sections that exist, so the module
/// map cannot silently fall behind the manifest.
@Suite(.slow) struct DocumentationReferencesTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Where references are looked for, relative to the repository: every file under these
    /// folders, and these files.
    static let scanned = [
        "Sources", "Tests", "Benchmarks", "FuzzTesting/Sources", "tools", "docs", ".ci",
        "README.md", "Package.swift"
    ]

    /// What a reader of the repository cannot open, as case-insensitive regular expressions, with
    /// what each is. The names are written in pieces so that this file does not match them itself.
    static let unopenable: [(pattern: String, what: String)] = [
        (#"\bDESIGN"# + #"\.md\b"#, "the design notes, which are not in the repository"),
        (#"\bSTYLE"# + #"\.md\b"#, "the style notes, which are not in the repository"),
        (#"\bshared"# + #"/seeds\b"#, "the seed briefs, which are not in the repository"),
        (#"\bseed "# + #"00[0-9]\b"#, "a seed brief, which is not in the repository"),
        (#"\bissues? "# + #"#?[0-9]+"#, "an issue of a tracker the repository does not ship")
    ]

    /// Every text file under ``scanned``, relative to the repository, in order (files that are not
    /// UTF-8, such as the screenshots, are left out).
    static func scannedFiles() throws -> [(path: String, text: String)] {
        var files: [(path: String, text: String)] = []
        for entry in scanned {
            let url = repository.appendingPathComponent(entry)
            var isDirectory: ObjCBool = false
            try #require(FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), "\(entry) is missing")
            var paths: [String] = []
            if isDirectory.boolValue {
                let enumerator = try #require(FileManager.default.enumerator(atPath: url.path))
                while let relative = enumerator.nextObject() as? String {
                    if relative.split(separator: "/").contains(where: { $0 == ".build" }) { continue }
                    paths.append(entry + "/" + relative)
                }
            } else {
                paths.append(entry)
            }
            for path in paths.sorted() {
                let file = repository.appendingPathComponent(path)
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isFolder), !isFolder.boolValue,
                    let text = try? String(contentsOf: file, encoding: .utf8)
                else { continue }
                files.append((path, text))
            }
        }
        return files
    }

    @Test func nothingCitesWhatTheRepositoryDoesNotHold() throws {
        let files = try Self.scannedFiles()
        #expect(files.count > 500, "found only \(files.count) files to scan; is the repository where #filePath says?")
        #expect(files.contains { $0.path == "Sources/OnboardingStore/OnboardingStore+Append.swift" })
        #expect(files.contains { $0.path == ".ci/run" })
        var found: [String] = []
        for (pattern, what) in Self.unopenable {
            let regex = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            for file in files {
                for (number, line) in file.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let text = String(line)
                    for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                        let cited = Range(match.range, in: text).map { String(text[$0]) } ?? pattern
                        found.append("\(file.path):\(number + 1): \"\(cited)\" is \(what); cite the repository's own doc and section, or say the fact itself")
                    }
                }
            }
        }
        #expect(found.isEmpty, "\(found.count) references a reader cannot open:\n\(found.joined(separator: "\n"))")
    }

    /// The checks see what they look for: each pattern matches the reference it stands for.
    @Test func thePatternsMatchWhatTheyAreFor() throws {
        let samples = [
            "see " + "DESIGN" + ".md §5", "STYLE" + ".md", "shared" + "/seed" + "s/002.md", "(seed " + "002)",
            "Seed " + "000: Wikipedia", "(issue " + "12)", "issue " + "7's", "Issue " + "#3"
        ]
        for sample in samples {
            let matched = try Self.unopenable.contains { entry in
                let regex = try NSRegularExpression(pattern: entry.pattern, options: [.caseInsensitive])
                return regex.firstMatch(in: sample, range: NSRange(sample.startIndex..., in: sample)) != nil
            }
            #expect(matched, "no pattern matches \"\(sample)\"")
        }
        for harmless in ["Issue.record(\"…\")", "12 fixed seeds", "--seed 7", "ONBOARDING_TEST_SEED=42", "the issuer"] {
            let matched = try Self.unopenable.contains { entry in
                let regex = try NSRegularExpression(pattern: entry.pattern, options: [.caseInsensitive])
                return regex.firstMatch(in: harmless, range: NSRange(harmless.startIndex..., in: harmless)) != nil
            }
            #expect(!matched, "\"\(harmless)\" is no reference, yet a pattern matches it")
        }
    }

    /// The names of every target `Package.swift` declares (system libraries, libraries,
    /// executables, tests), in order.
    static func packageTargets() throws -> [String] {
        let manifest = try String(contentsOf: repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let regex = try NSRegularExpression(pattern: #"\.(?:systemLibrary|target|executableTarget|testTarget)\(\s*name:\s*"([^"]+)""#)
        return regex.matches(in: manifest, range: NSRange(manifest.startIndex..., in: manifest)).compactMap { match in
            Range(match.range(at: 1), in: manifest).map { String(manifest[$0]) }
        }
    }

    @Test func theArchitecturePageNamesEveryTarget() throws {
        let targets = try Self.packageTargets()
        // The four system libraries and CTLS, the modules, the executables, the test support and targets.
        #expect(targets.count >= 35, "found only \(targets.count) targets in Package.swift: \(targets)")
        #expect(targets.contains("CLMDB") && targets.contains("onboard-bench") && targets.contains("OnboardCLITests"))
        let page = try String(contentsOf: Self.repository.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let missing = targets.filter { !page.contains("`\($0)`") }
        #expect(missing.isEmpty, "docs/architecture.md does not name (as `Name`) these targets of Package.swift: \(missing.joined(separator: ", "))")
    }

    /// A heading's anchor as GitHub makes it: lowercased, everything but letters, digits, spaces,
    /// `-` and `_` dropped, spaces turned into `-`.
    static func anchor(of heading: String) -> String {
        String(
            heading.lowercased().compactMap { character -> Character? in
                if character == " " { return "-" }
                return character.isLetter || character.isNumber || character == "-" || character == "_" ? character : nil
            })
    }

    @Test func theArchitecturePageLinksToPagesAndSectionsThatExist() throws {
        let docs = Self.repository.appendingPathComponent("docs")
        let page = try String(contentsOf: docs.appendingPathComponent("architecture.md"), encoding: .utf8)
        let regex = try NSRegularExpression(pattern: #"\]\(([^)#\s]+)(?:#([^)\s]+))?\)"#)
        let links = regex.matches(in: page, range: NSRange(page.startIndex..., in: page)).map { match in
            (
                file: Range(match.range(at: 1), in: page).map { String(page[$0]) } ?? "",
                anchor: Range(match.range(at: 2), in: page).map { String(page[$0]) }
            )
        }
        #expect(links.count >= 20, "found only \(links.count) links in docs/architecture.md")
        for link in links where !link.file.contains("://") {
            let target = docs.appendingPathComponent(link.file)
            guard let text = try? String(contentsOf: target, encoding: .utf8) else {
                Issue.record("docs/architecture.md links to \(link.file), which is not in docs/")
                continue
            }
            guard let anchor = link.anchor else { continue }
            let anchors = text.split(separator: "\n").filter { $0.hasPrefix("#") }
                .map { Self.anchor(of: String($0.drop { $0 == "#" }.dropFirst())) }
            #expect(anchors.contains(anchor), "docs/architecture.md links to \(link.file)#\(anchor), a section \(link.file) does not have")
        }
    }
}
