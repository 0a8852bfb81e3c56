import Foundation
@_exported import TestSupport
import Synchronization
@testable import LMDB

// Helpers for the LMDB wrapper tests. Nothing here asserts; the test files do.

/// The big-endian bytes of `value`: LMDB compares keys as unsigned bytes, so these sort in
/// numeric order.
func key(_ value: UInt64) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
}

func number(_ bytes: some Collection<UInt8>) -> UInt64 {
    bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
}

/// `count` bytes that differ for every `seed`, so a value read back under the wrong key shows.
func pattern(_ seed: UInt64, count: Int) -> [UInt8] {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    return (0..<count).map { _ in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state)
    }
}

/// The keys of `database` in cursor order, copied out of the transaction.
func allKeys(_ environment: Environment, _ database: Database) throws -> [UInt64] {
    try environment.read { transaction throws in
        try transaction.withCursor(database) { cursor in
            var keys: [UInt64] = []
            var entry = try cursor.first()
            while let current = entry {
                keys.append(number(current.key))
                entry = try cursor.next()
            }
            return keys
        }
    }
}

/// Paths of the files this process has open inside `directory` (Linux: from /proc/self/fd).
/// `nil` where the platform cannot tell.
func openFiles(under directory: String) -> [String]? {
    #if os(Linux)
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        let resolvedDirectory = (try? FileManager.default.destinationOfSymbolicLink(atPath: directory)) ?? directory
        return descriptors.compactMap { descriptor in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)") else {
                return nil
            }
            return target.hasPrefix(resolvedDirectory + "/") ? target : nil
        }
    #else
        return nil
    #endif
}

/// Runs each body on its own thread (LMDB calls block, so they stay off Swift's cooperative
/// pool) and returns when all have finished.
func runOnThreads(_ bodies: [@Sendable () -> Void]) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let group = DispatchGroup()
        for body in bodies {
            group.enter()
            let thread = Thread {
                body()
                group.leave()
            }
            thread.start()
        }
        group.notify(queue: .global()) { continuation.resume() }
    }
}
