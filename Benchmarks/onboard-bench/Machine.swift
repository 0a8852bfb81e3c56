import CLMDB
import CSQLite
import Foundation

/// What the figures were measured on, for the JSON and docs/benchmarks.md.
enum Machine {
    static func describe() -> [String: Any] {
        var system = utsname()
        uname(&system)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return [
            "cores": ProcessInfo.processInfo.activeProcessorCount,
            "memory_bytes": ProcessInfo.processInfo.physicalMemory,
            "cpu_model": cpuModel(),
            "os": "\(field(system.sysname)) \(field(system.release)) \(field(system.machine))",
            "os_version": ProcessInfo.processInfo.operatingSystemVersionString,
            "swift_version": swiftVersion(),
            "lmdb_version": String(cString: mdb_version(nil, nil, nil)),
            "sqlite_version": String(cString: sqlite3_libversion())
        ]
    }

    static func cpuModel() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown" }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown"
    }

    /// The toolchain on PATH (the one `swift run` used); "unknown" when it cannot be run.
    static func swiftVersion() -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "--version"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return "unknown" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let first = String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init)
        return first ?? "unknown"
    }
}
