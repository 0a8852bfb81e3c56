import Foundation
import CLibPQ

/// A `postgres://` URL, checked by libpq's own parser before any connection is tried, that can
/// be printed without its password.
///
/// ```swift
/// let url = try DatabaseURL("postgres://onboard:secret@127.0.0.1:5432/onboard")
/// print(url.redacted)   // postgres://onboard@127.0.0.1:5432/onboard
/// ```
public struct DatabaseURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL as given: only ever handed to libpq, never printed.
    let text: String
    /// The connection parameters libpq read from it (`host`, `port`, `dbname`, `user`, …).
    public let parameters: [String: String]

    /// The schemes libpq takes as a URL.
    public static let schemes = ["postgres://", "postgresql://"]

    public init(_ text: String) throws(PostgreSQLError) {
        guard Self.schemes.contains(where: { text.hasPrefix($0) }) else {
            throw PostgreSQLError(
                .badURL, "the database URL must start with postgres:// or postgresql:// (for example postgres://onboard@127.0.0.1:5432/onboard)")
        }
        guard !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw PostgreSQLError(.badURL, "the database URL holds a control character; write it on one line")
        }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &error) else {
            let reason = error.map { String(cString: $0) } ?? "libpq could not read it"
            if let error { PQfreemem(error) }
            throw PostgreSQLError(.badURL, "the database URL is not valid: \(Self.oneLine(reason)); write it as postgres://USER@HOST:PORT/DATABASE")
        }
        defer { PQconninfoFree(options) }
        var parameters: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { parameters[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        // libpq reads the port only when it connects; a typo should fail here, with the others.
        if let port = parameters["port"],
            !port.split(separator: ",", omittingEmptySubsequences: false)
                .allSatisfy({ UInt16($0).map { $0 > 0 } ?? false })
        {
            throw PostgreSQLError(
                .badURL, "the database URL is not valid: its port must be a number from 1 to 65535; write it as postgres://USER@HOST:PORT/DATABASE")
        }
        self.text = text
        self.parameters = parameters
    }

    /// The URL without its password (and without any query), for messages and logs.
    public var redacted: String {
        let user = parameters["user"].map { $0 + "@" } ?? ""
        let host = parameters["host"] ?? parameters["hostaddr"] ?? "localhost"
        let port = parameters["port"].map { ":" + $0 } ?? ""
        let database = parameters["dbname"].map { "/" + $0 } ?? ""
        return "postgres://\(user)\(host)\(port)\(database)"
    }

    public var description: String { redacted }

    /// Removes the password, should a message of libpq's ever repeat it, and folds lines.
    func scrubbed(_ message: String) -> String {
        var message = Self.oneLine(message)
        if let password = parameters["password"], !password.isEmpty {
            message = message.replacingOccurrences(of: password, with: "…")
        }
        return message
    }

    /// libpq's messages end in a newline and may span lines; a log line must not.
    static func oneLine(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: "; ")
    }
}
