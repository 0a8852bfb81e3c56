import Foundation
import HTTPServer
import OnboardingModel
import OnboardingStore

#if canImport(Glibc)
    import Glibc
#endif

extension SyncServer {
    /// What `onboard serve` may write to its access log about a request: a user id in a path
    /// (`/v1/users/{user}/…`) is replaced by a keyed pseudonym, the query string is dropped, and
    /// every byte a client could use to forge or hide a line is escaped.
    ///
    /// The pseudonym is `u:` and the first 16 hex digits of BLAKE2b-128 (libsodium
    /// `crypto_generichash`, 16-byte output) of the user id's UTF-8, keyed with the 32 random
    /// bytes in `DATA/log.key` (mode 0600, made on first use). One user reads the same in every
    /// line, so an operator can follow one through the log, but the log alone does not name
    /// them; whoever holds the key and a candidate id can check it. Delete the key to make old
    /// logs unlinkable (a new one is made at the next start; pseudonyms change with it).
    ///
    /// ```swift
    /// let log = try SyncServer.AccessLog(dataDirectory: "/var/lib/onboard")
    /// log.loggablePath("/v1/users/alice/history?since=x")   // "/v1/users/u:3f0c9a1e5b7d2c48/history"
    /// ```
    public struct AccessLog: Sendable {
        /// The key's file in the data directory.
        public static let keyFileName = "log.key"
        /// 512 bytes: longer than any path the protocol uses (a 64-byte device id escaped is at
        /// most 256); a longer one is an attack on the log's size and is cut.
        public static let maximumPathBytes = 512
        /// 32 bytes: longer than any method the protocol uses.
        public static let maximumMethodBytes = 32

        /// Why the key file cannot be used: one line naming the file and what to do.
        public struct KeyError: Error, CustomStringConvertible {
            public let description: String
        }

        private let key: SecretKey

        /// Reads `DATA/log.key`, creating it (atomically, mode 0600) when there is none.
        public init(dataDirectory: String) throws(KeyError) {
            key = try Self.loadOrCreateKey(at: (dataDirectory as NSString).appendingPathComponent(Self.keyFileName))
        }

        /// Pseudonymises under `key` (tests; a server uses its data directory's key).
        public init(key: SecretKey) {
            self.key = key
        }

        /// `u:` and 16 hex digits: the log's name for `user`.
        public func pseudonym(forUser user: String) -> String {
            "u:" + UserRef(user: user, pseudonymKey: key).hex.prefix(16)
        }

        /// `rawPath` (as sent, percent-encoded) made loggable: the query dropped, the user segment
        /// of `/v1/users/{user}/…` pseudonymised (found the way the router finds it: empty
        /// segments do not count, the id is percent-decoded first, so `%61lice` is `alice`),
        /// every other byte escaped (``HTTPAccessLogEntry/escaped(_:)``), and the result cut at
        /// ``maximumPathBytes``.
        public func loggablePath(_ rawPath: String) -> String {
            let path = rawPath.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            var segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            let named = segments.indices.filter { !segments[$0].isEmpty }
            if named.count >= 3, segments[named[0]] == "v1", segments[named[1]] == "users" {
                let encoded = segments[named[2]]
                segments[named[2]] = pseudonym(forUser: SyncPaths.percentDecoded(encoded) ?? encoded)
            }
            let loggable = segments.joined(separator: "/")
            return Self.cut(HTTPAccessLogEntry.escaped(loggable), at: Self.maximumPathBytes, sentBytes: loggable.utf8.count)
        }

        /// The whole access-log line: time, method, path, status, response bytes, duration — each
        /// field escaped, none holding a space, so a line is exactly six fields.
        public func line(for entry: HTTPAccessLogEntry, at time: String) -> String {
            let milliseconds = entry.duration.components.seconds * 1000 + entry.duration.components.attoseconds / 1_000_000_000_000_000
            let method = Self.cut(HTTPAccessLogEntry.escaped(entry.method), at: Self.maximumMethodBytes, sentBytes: entry.method.utf8.count)
            return "\(HTTPAccessLogEntry.escaped(time)) \(method) \(loggablePath(entry.rawPath)) \(entry.status) \(entry.responseBodyBytes)B \(milliseconds)ms"
        }

        /// The access-log line as one JSON object (`--log-format json`): `{"at","kind":"access",
        /// "method","path","status","bytes","duration_ms"}`, the method and path made loggable as
        /// in the text line (user pseudonymised, query dropped, control bytes escaped), written by
        /// the canonical JSON writer.
        public func jsonLine(for entry: HTTPAccessLogEntry, at time: String) -> String {
            let milliseconds = entry.duration.components.seconds * 1000 + entry.duration.components.attoseconds / 1_000_000_000_000_000
            let method = Self.cut(HTTPAccessLogEntry.escaped(entry.method), at: Self.maximumMethodBytes, sentBytes: entry.method.utf8.count)
            return String(
                decoding: SyncWire.encode(
                    .object([
                        .init("at", .string(time)), .init("kind", .string("access")), .init("method", .string(method)),
                        .init("path", .string(loggablePath(entry.rawPath))), .init("status", .number(String(entry.status))),
                        .init("bytes", .number(String(entry.responseBodyBytes))), .init("duration_ms", .number(String(milliseconds)))
                    ])), as: UTF8.self)
        }

        /// `escaped` cut to at most `limit` bytes plus a marker with the field's length before escaping
        /// (`...(3019B)`), never inside an `\xHH` escape.
        private static func cut(_ escaped: String, at limit: Int, sentBytes: Int) -> String {
            let bytes = Array(escaped.utf8)
            guard bytes.count > limit else { return escaped }
            var end = limit
            if let backslash = bytes[max(0, end - 3)..<end].lastIndex(of: UInt8(ascii: "\\")) { end = backslash }
            return String(decoding: bytes[..<end], as: UTF8.self) + "...(\(sentBytes)B)"
        }

        /// The key in `DATA/log.key`, `nil` when there is none (nothing is created).
        package static func existingKey(dataDirectory: String) throws(KeyError) -> SecretKey? {
            try readKey(at: (dataDirectory as NSString).appendingPathComponent(keyFileName))
        }

        private static func loadOrCreateKey(at path: String) throws(KeyError) -> SecretKey {
            if let existing = try readKey(at: path) { return existing }
            // Written whole to a temporary file, then linked into place: a crash leaves no
            // half-written key, and of two processes starting at once, one key wins and both use it.
            let key = SecretKey.random()
            let temporary = path + ".\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw KeyError(
                    description: "cannot create the access-log key \(path): \(String(cString: strerror(errno))); check the data directory's permissions")
            }
            defer { unlink(temporary) }
            let written = key.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            let synced = fsync(descriptor) == 0
            closeFile(descriptor)
            guard written == SecretKey.byteCount, synced else {
                throw KeyError(description: "cannot write the access-log key \(path): \(String(cString: strerror(errno))); check free space and permissions")
            }
            if link(temporary, path) != 0 {
                guard errno == EEXIST, let raced = try readKey(at: path) else {
                    throw KeyError(
                        description: "cannot create the access-log key \(path): \(String(cString: strerror(errno))); check the data directory's permissions")
                }
                return raced
            }
            return key
        }

        /// The key in `path`, nil when there is no such file.
        private static func readKey(at path: String) throws(KeyError) -> SecretKey? {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            if descriptor < 0 {
                if errno == ENOENT { return nil }
                throw KeyError(
                    description: "cannot read the access-log key \(path): \(String(cString: strerror(errno))); it must be a regular file readable by the server"
                )
            }
            defer { closeFile(descriptor) }
            var bytes = [UInt8](repeating: 0, count: SecretKey.byteCount + 1)
            let count = read(descriptor, &bytes, bytes.count)
            guard count == SecretKey.byteCount else {
                throw KeyError(
                    description:
                        "the access-log key \(path) is \(max(0, count)) bytes, not \(SecretKey.byteCount); delete it and a new one is made at the next start (log pseudonyms then change)"
                )
            }
            return SecretKey(bytes: Array(bytes[..<SecretKey.byteCount]))
        }
    }
}

// A free function, because inside `SyncServer` the name `close` means the server's own.
private func closeFile(_ descriptor: Int32) { _ = close(descriptor) }
