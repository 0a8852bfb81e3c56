import Foundation

/// Command line of `onboard-bench` and the sizes each mode runs with.
struct BenchOptions {
    var quick = false
    var jsonPath: String?
    /// Parent directory of the scratch stores; a fresh subdirectory per run, removed at the end.
    var directory = NSTemporaryDirectory()
    /// Sections to run (`--only`); empty runs all of them.
    var sections: Set<String> = []
    static let sectionNames = ["append", "import", "rebuild", "lockout", "memory", "group", "sync", "server", "server-scale"]
    /// Sections only `--only` runs: they load millions of rows.
    static let onDemandSections: Set<String> = ["server-scale"]

    func runs(_ section: String) -> Bool {
        sections.isEmpty ? !Self.onDemandSections.contains(section) : sections.contains(section)
    }

    /// The issue asks for at least 5 alternating repetitions per measurement.
    var repetitions = 5

    // Sizes. Full mode follows the issue (10^6 events for rebuild and history, 10^5 lockout keys)
    // and stays within about 15 minutes on 2 cores; quick mode proves the suite in under a minute.
    var appendEventsBatch1: Int { quick ? 100 : 1_000 }
    var appendEventsBatch64: Int { quick ? 64 * 10 : 64 * 100 }
    var appendEventsBatch1000: Int { quick ? 3_000 : 100_000 }
    var groupCommitEvents: Int { quick ? 256 : 2_048 }
    var logEvents: Int { quick ? 20_000 : 1_000_000 }
    var historyEvents = 100
    var historyCallsPerRepetition: Int { quick ? 50 : 200 }
    var lockoutKeys = 100_000
    var lockoutDecisionsPerRepetition: Int { quick ? 100_000 : 1_000_000 }
    // 10^4 users on one device: adding a user to MultiUserProjection costs O(users on the device)
    // (10^5 users did not finish in a minute), and no device holds that many people.
    var memoryUsers = 10_000
    // The issue's 10^6 events per round: at ~27,000 events/s end to end and ~47,000 of local
    // ingest, five rounds of both take about 5½ minutes, and the full suite stays near 7.
    var syncEvents: Int { quick ? 10_000 : 1_000_000 }

    static let usage = """
        usage: onboard-bench [--quick] [--json PATH] [--dir PATH] [--only SECTION[,SECTION…]]

          --quick      small sizes (under a minute); what CI runs to prove the suite works
          --json PATH  also write the machine and results as JSON to PATH
          --dir PATH   where to create scratch stores (default: the temporary directory); must be a
                       real disk, since a tmpfs makes fsync free and the durable figures meaningless
          --only LIST  run only these sections (comma-separated): append, import, rebuild (with history),
                       lockout, memory, group, sync, server (PostgreSQL: needs $ONBOARD_BENCH_DATABASE_URL,
                       a server whose databases the bench may create and drop), server-scale (the
                       same database: 10^5 devices and 10^7 events, only when named); for profiling one path
        """

    static func parse(_ arguments: [String]) -> BenchOptions {
        var options = BenchOptions()
        var index = 0
        func value(after flag: String) -> String {
            index += 1
            guard index < arguments.count else { fail("\(flag) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--quick": options.quick = true
            case "--json": options.jsonPath = value(after: "--json")
            case "--dir": options.directory = value(after: "--dir")
            case "--only":
                let names = value(after: "--only").split(separator: ",").map(String.init)
                for name in names where !sectionNames.contains(name) {
                    fail("unknown section \(name) for --only; choose from \(sectionNames.joined(separator: ", "))")
                }
                options.sections.formUnion(names)
            case "--help", "-h":
                emit(usage)
                exit(0)
            default: fail("unknown argument \(arguments[index])")
            }
            index += 1
        }
        return options
    }
}

/// A usage error: the message and the usage, exit 64 (EX_USAGE).
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("onboard-bench: \(message)\n\(BenchOptions.usage)\n".utf8))
    exit(64)
}

/// An operating error (a file that cannot be written): the message, exit 74 (EX_IOERR).
func failOperation(_ message: String) -> Never {
    FileHandle.standardError.write(Data("onboard-bench: \(message)\n".utf8))
    exit(74)
}
