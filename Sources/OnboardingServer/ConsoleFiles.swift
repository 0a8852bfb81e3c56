import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The audit console's static files (HTML, CSS, JS, SVG; no build step), served at `/console/`
/// by every `onboard serve`, with no option: they are the OnboardingServer target's resources
/// (`Sources/OnboardingServer/Console`, which SwiftPM copies into
/// ``bundleName`` next to the executable it builds, and an installation keeps next to `onboard`).
///
/// Read once, the first time the console is asked for, and served from memory: a request names a
/// file by its path relative to the directory and gets exactly that file or 404, so no request
/// can reach a file outside it (`..`, an absolute path, a symbolic link out) and no directory is
/// ever listed. Hidden files (a name starting with `.`) are never served.
///
/// ```swift
/// ConsoleFiles.shared.file("app.js")?.contentType   // "text/javascript; charset=utf-8"
/// ```
struct ConsoleFiles: Sendable {
    struct File: Sendable, Equatable {
        let contentType: String
        let bytes: [UInt8]
    }

    /// The resource directory SwiftPM makes for the OnboardingServer target of this package.
    static let bundleName = "OnboardingStore_OnboardingServer.resources"
    /// The console's directory inside it (the target's `resources: [.copy("Console")]`).
    static let directoryName = "Console"
    /// 256 files: a page, its scripts, styles and icons are a dozen; more is not a console.
    static let maximumFiles = 256
    /// 4 MiB per file and 16 MiB in all: the console is held in memory for the server's life.
    static let maximumFileBytes = 4 << 20
    static let maximumTotalBytes = 16 << 20

    let files: [String: File]
    /// Why no console could be loaded (shown as the 404's message), `nil` when it was.
    let problem: String?

    /// The console of this process, loaded on first use.
    static let shared = ConsoleFiles.load(from: locate())

    func file(_ path: String) -> File? { files[path] }

    /// The first console directory that exists: next to the executable as Foundation sees it,
    /// then next to the executable's real path (an `onboard` reached through a symbolic link).
    static func locate() -> String? {
        var candidates: [URL] = [Bundle.main.bundleURL]
        if let executable = Bundle.main.executableURL { candidates.append(executable.resolvingSymlinksInPath().deletingLastPathComponent()) }
        for base in candidates {
            let directory = base.appendingPathComponent(bundleName).appendingPathComponent(directoryName).path
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue { return directory }
        }
        return nil
    }

    /// Every regular file under `directory` (nested paths as `a/b.svg`), within the limits.
    static func load(from directory: String?) -> ConsoleFiles {
        guard let directory else {
            return ConsoleFiles(
                files: [:],
                problem: "this onboard was installed without its console (the \(bundleName) directory next to the executable); reinstall it with that directory"
            )
        }
        var files: [String: File] = [:]
        var total = 0
        guard let walker = FileManager.default.enumerator(atPath: directory) else {
            return ConsoleFiles(files: [:], problem: "the console's files cannot be read; see the server's installation")
        }
        while let relative = walker.nextObject() as? String {
            let full = (directory as NSString).appendingPathComponent(relative)
            let components = relative.split(separator: "/")
            guard !components.contains(where: { $0.hasPrefix(".") }) else { continue }
            var status = stat()
            // lstat: a symbolic link is not followed, so the console never serves a file outside its directory.
            guard lstat(full, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
            guard files.count < maximumFiles, Int(status.st_size) <= maximumFileBytes, total + Int(status.st_size) <= maximumTotalBytes,
                let data = FileManager.default.contents(atPath: full)
            else { continue }
            total += data.count
            files[relative] = File(contentType: contentType(of: relative), bytes: Array(data))
        }
        return ConsoleFiles(files: files, problem: nil)
    }

    /// The media type by extension; anything unknown is sent as bytes (`nosniff` keeps a browser
    /// from reading it as a script or a page).
    static func contentType(of path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "html", "htm": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "json", "map": "application/json"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        case "woff2": "font/woff2"
        case "txt": "text/plain; charset=utf-8"
        default: "application/octet-stream"
        }
    }
}
