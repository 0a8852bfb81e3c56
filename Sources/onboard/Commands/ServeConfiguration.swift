import Foundation

/// Where `onboard serve`'s settings come from, first found wins: the command line; the
/// environment, `ONBOARD_SERVE_<OPTION>` (the option's name upper-cased, `-` as `_`:
/// `ONBOARD_SERVE_TLS_CERT`); a configuration file, `--config FILE` or `$ONBOARD_SERVE_CONFIG`,
/// of `name = value` lines with the options' names without `--` (docs/operations.md
/// § Configuration).
///
/// ```text
/// # /etc/onboard/serve.conf
/// host = 0.0.0.0
/// port = 8443
/// tls-cert = /etc/onboard/tls/fullchain.pem
/// ```
enum ServeConfiguration {
    static let configOption = OptionSpec(
        name: "config", valueName: "FILE",
        help: "read settings from FILE (name = value lines; default $ONBOARD_SERVE_CONFIG)")
    static let checkOption = OptionSpec(
        name: "check-config", valueName: nil,
        help: "check the configuration, print it and exit (0 good, 64 or 78 not) without serving")
    /// 64 KiB: a configuration of every option fits in one; more is not a configuration file.
    static let maximumFileBytes = 64 << 10

    /// Where one setting came from, for `--check-config`.
    enum Source: String {
        case commandLine = "command line"
        case environment
        case file
    }

    static func environmentName(_ option: String) -> String {
        "ONBOARD_SERVE_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// `invocation` with every valued option of `options` not on the command line filled from the
    /// environment, then the file; and where each came from.
    static func merge(_ invocation: Invocation, options: [OptionSpec]) throws(CLIError) -> (Invocation, [String: Source]) {
        let valued = options.filter { $0.valueName != nil && $0.name != configOption.name }
        var merged = invocation
        var sources: [String: Source] = [:]
        for name in invocation.values.keys { sources[name] = .commandLine }
        for option in valued where merged.values[option.name] == nil {
            if let value = invocation.environment[environmentName(option.name)], !value.isEmpty {
                merged.values[option.name] = value
                sources[option.name] = .environment
            }
        }
        let path = invocation.values[configOption.name] ?? invocation.environment["ONBOARD_SERVE_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        if let path {
            for (name, value) in try read(path, allowed: Set(valued.map(\.name))) where merged.values[name] == nil {
                merged.values[name] = value
                sources[name] = .file
            }
        }
        return (merged, sources)
    }

    /// The settings of the file at `path`: `name = value` lines, `#` comments and blank lines
    /// ignored, a value optionally in double quotes. A setting that is no option, a name given
    /// twice, a line without `=` or a control character is an error naming the line.
    static func read(_ path: String, allowed: Set<String>) throws(CLIError) -> [String: String] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CLIError(ExitCode.noInput, "onboard serve: cannot read the configuration file \(path) (missing, or not readable by this user)")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maximumFileBytes + 1)) ?? Data()
        guard data.count <= maximumFileBytes else {
            throw .usage("onboard serve: the configuration file \(path) is larger than 64 KiB; it is not a configuration")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .usage("onboard serve: the configuration file \(path) is not UTF-8 text")
        }
        var settings: [String: String] = [:]
        // CRLF ends a line too (and is one Character, so it is turned into LF before splitting).
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            let where_ = "\(path):\(index + 1)"
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\t" }) else {
                throw .usage("onboard serve: \(where_): a control character; write one name = value per line")
            }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw .usage("onboard serve: \(where_): expected name = value, e.g. port = 8443")
            }
            let name = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
            var value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard allowed.contains(name) else {
                throw .usage(
                    "onboard serve: \(where_): unknown setting \"\(name)\"; the settings are serve's options without --: \(allowed.sorted().joined(separator: ", "))"
                )
            }
            guard settings[name] == nil else { throw .usage("onboard serve: \(where_): \(name) is set twice") }
            guard !value.isEmpty else { throw .usage("onboard serve: \(where_): \(name) has no value") }
            settings[name] = value
        }
        return settings
    }
}
