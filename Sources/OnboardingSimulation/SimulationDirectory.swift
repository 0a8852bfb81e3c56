import Foundation

/// Where a simulation keeps its stores: a fresh directory under /dev/shm when that is a writable
/// directory (a memory file system: the thousands of fsyncs of a run cost nothing, and a crash
/// image is the same as on disk since it is taken from the page cache), else under the system's
/// temporary directory.
enum SimulationDirectory {
    static let memoryFileSystem = "/dev/shm"

    static func make(seed: UInt64, under parent: String?) throws -> String {
        let base: String
        if let parent {
            base = parent
        } else if access(memoryFileSystem, W_OK) == 0 {
            base = memoryFileSystem
        } else {
            base = NSTemporaryDirectory()
        }
        var template = Array((base as NSString).appendingPathComponent("onboard-sim-\(seed)-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw SimulationSetupError("cannot make a directory under \(base): \(String(cString: strerror(errno))); pass --directory with a writable one")
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
