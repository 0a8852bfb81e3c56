import Foundation
@_exported import OnboardingModel

#if canImport(Glibc)
    import Glibc
#endif

// Helpers every test target shares. Nothing here asserts; the tests do.

/// A fresh directory under the system temporary directory, unique per test (tests run in
/// parallel, so no two ever share a path). Remove it with `remove()` in a `defer`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init() throws {
        var template = Array(
            (NSTemporaryDirectory() as NSString)
                .appendingPathComponent("onboard-tests-XXXXXX").utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!)
        }
        guard created != nil else { throw TestFailure("mkdtemp failed: \(String(cString: strerror(errno)))") }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public var url: URL { URL(fileURLWithPath: path) }

    /// The path of `component` inside this directory.
    public func appending(_ component: String) -> String {
        (path as NSString).appendingPathComponent(component)
    }

    /// Writes `text` to the file `name` in this directory and returns its path.
    public func write(_ name: String, _ text: String) throws -> String {
        let file = appending(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    public func remove() {
        // A test may have made something read-only; give the owner write access back first.
        if let enumerator = FileManager.default.enumerator(atPath: path) {
            for case let relative as String in enumerator {
                chmod(appending(relative), 0o700)
            }
        }
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A failure of test setup, thrown where `#require` does not fit.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
