import Foundation
import Testing
import TestSupport

/// Golden tests of help text, usage errors and their exit codes.
@Suite(.slow) struct HelpAndUsageTests {
    @Test func overviewListsEveryCommand() async throws {
        try await onOwnThread {
            let result = try CLI.run(["--help"])
            #expect(result.status == 0)
            #expect(
                result.stdout == """
                    onboard — record onboarding and sign-in events in a tamper-evident LMDB log

                    Usage: onboard COMMAND [ARGUMENTS] [--store PATH]

                    Commands:
                      record           append one event given as JSON (argument or stdin)
                      import           append events from JSONL, or from a real sshd, Keycloak, Okta, Entra ID, CloudTrail or Windows log (- for stdin), every line checked first
                      export           write the log to stdout as JSONL, CSV or OCSF
                      log              print the log readably, optionally following new events
                      stats            device id, event count, head seq and hash, file size, counts per type
                      verify           check the hash chain, seqs, indexes and signed heads; exit 1 on any problem
                      forget-user      erase a user's personal fields: destroy their key, record user_forgotten
                      lockout          lockout state of every key with counted failures, under a policy, at a time
                      lab              replay a log under many lockout policies: compare them, or sweep a grid for the best
                      session          the signed-in user and the current screen, state and messages of a device
                      users            the users onboarded on a device, the selected one first, with lock state
                      history          sign-in attempts with outcomes, and sessions with durations, filtered and paged
                      prune            remove old events the sync server has acknowledged; the chain stays verifiable
                      generate         write a seeded, realistic workload of honest traffic and attacks as JSONL
                      sync             upload the events the sync server has not acknowledged, oldest first
                      token            show a sync server token's role, device and expiry, or rotate it (--rotate)
                      serve            run the sync server (HTTP on libmicrohttpd, storage on LMDB or PostgreSQL)
                      enroll           issue a device or auditor token on a sync server's storage (or revoke)
                      audit            verify every device replica a sync server holds against its signed heads
                      migrate-server   copy a sync server's data directory (LMDB replicas) into PostgreSQL
                      demo             record a scripted story of the three onboarding flows on a fresh store and show it

                    Every command takes --help. Store commands take --store PATH (default: $ONBOARD_STORE or
                    ./onboarding.lmdb); server commands take --data PATH (LMDB) or --database URL (PostgreSQL).
                    Start with: onboard demo

                    """)
        }
    }

    @Test func importHelpIsGolden() async throws {
        try await onOwnThread {
            let result = try CLI.run(["import", "--help"])
            #expect(result.status == 0)
            #expect(
                result.stdout == """
                    onboard import — append events from JSONL, or from a real sshd, Keycloak, Okta, Entra ID, CloudTrail or Windows log (- for stdin), every line checked first

                    Usage: onboard import FILE|- [--store PATH] [--device ID] [--from FORMAT] [--year YYYY] [--timezone ZONE] [--sshd-mode normal|aggressive] [--commit-every N] [--durability full|relaxed] [--max-clock-skew SECONDS|none] [--json]

                    Every line is checked before anything is written: a malformed line, an unknown type or
                    field, a missing or wrongly typed field, a field that looks like a secret, an id used for
                    two different events, a "seq" other than the one the store assigns, or a time more than
                    --max-clock-skew after the clock (an event that cannot have happened yet) stops the import
                    with the line number, and nothing from the file is appended. Events already in the store
                    (same id and content) are skipped, so re-importing a file appends nothing; so are lines
                    that repeat an earlier line's event. The checked events are then appended N per commit:
                    a file of up to N events in one transaction; of a larger one, a failed commit (disk full,
                    crash) keeps the commits before it, and a rerun resumes. The file is read as a stream
                    (stdin is copied to a temporary file to be read twice); a line has at most 64 KiB.

                    --from sshd|keycloak|okta|entra|cloudtrail|windows maps a real authentication log to
                    events: failed, throttled and successful sign-ins with their user and client address,
                    and the locks the identity provider enforced (account_locked), on the device that is the
                    host (sshd, Windows), the realm (Keycloak) or the account (CloudTrail), or --device for
                    records that name none (Okta, Entra ID). Records that are not authentication are counted
                    by kind and reported with their first line numbers, never fatal. The import's last commit
                    also appends a log_imported event on the store's device: what it read, appended and left
                    out, which onboard lab reports. Each event's id is made from its record, so importing the
                    same log again appends nothing (and no second summary).

                    Options:
                      --store PATH                    the store directory (default: $ONBOARD_STORE or ./onboarding.lmdb)
                      --device ID                     device id of a store created by this command (default: random); with --from a log also the device of records that name no host
                      --from FORMAT                   what FILE is: jsonl, the store's JSON Lines (default); sshd, OpenSSH log lines (syslog or journalctl); keycloak, Keycloak's event JSON; okta, Okta's System Log; entra, Entra ID sign-in logs; cloudtrail, AWS CloudTrail; windows, Windows Security events (wevtutil XML or winlogbeat JSON) (docs/importers.md)
                      --year YYYY                     --from sshd: the year of the first line's syslog timestamp (default: inferred so that the last line is not after the file's modification time)
                      --timezone ZONE                 --from sshd: the zone local syslog times were written in, e.g. Europe/Berlin or UTC (default: this machine's); times with an offset keep it. --from keycloak: the Keycloak server's zone, for the end of a lockout (default: UTC)
                      --sshd-mode normal|aggressive   --from sshd: normal reads sign-in attempts and the server's cuts (fail2ban's default mode); aggressive also pre-authentication abuse as sign_in_aborted events (fail2ban's ddos, extra and aggressive modes)
                      --commit-every N                events per commit (default 100000); memory grows with N
                      --durability full|relaxed       full (default): durable on return; relaxed: no fsync per commit (survives a crash, not a power loss)
                      --max-clock-skew SECONDS|none   refuse events dated more than this after the clock (default 300); none takes any time, e.g. a log whose clock is known wrong
                      --json                          print the summary as one JSON object on stdout instead of text (docs/importers.md § The summary)
                      -h, --help                      show this help

                    """)
        }
    }

    @Test(arguments: [
        "record", "import", "export", "log", "stats", "verify", "lockout", "session", "users", "history", "generate", "sync", "token", "serve", "enroll", "demo"
    ])
    func everyCommandHasHelp(command: String) async throws {
        try await onOwnThread {
            let viaFlag = try CLI.run([command, "--help"])
            let viaHelp = try CLI.run(["help", command])
            #expect(viaFlag.status == 0)
            #expect(viaFlag.stdout.hasPrefix("onboard \(command) — "))
            #expect(viaFlag.stdout.contains("Usage: onboard \(command)"))
            #expect(
                viaFlag.stdout.contains(
                    ["serve", "enroll"].contains(command)
                        ? "--data PATH"
                        : command == "generate"
                            ? "--events N"
                            : command == "token" ? "--server URL" : "--store PATH"))
            #expect(viaFlag.stdout == viaHelp.stdout)
        }
    }

    @Test func usageErrorsAreOneLineWithExit64() async throws {
        try await onOwnThread {
            let cases: [([String], String)] =
                [
                    (["bogus"], "onboard: unknown command \"bogus\"; run onboard --help for the list\n"),
                    (
                        ["import"],
                        "onboard import: expected FILE|-, got 0 argument(s); usage: onboard import FILE|- [--store PATH] [--device ID] [--from FORMAT] [--year YYYY] [--timezone ZONE] [--sshd-mode normal|aggressive] [--commit-every N] [--durability full|relaxed] [--max-clock-skew SECONDS|none] [--json]\n"
                    ),
                    (["record", "{}", "--durability", "sometimes"], "onboard record: --durability must be full or relaxed, got \"sometimes\"\n"),
                    (["export", "--format", "xml"], "onboard export: unknown --format \"xml\"; valid formats: jsonl, csv, ocsf\n"),
                    (["export", "--all-events"], "onboard export: --all-events only applies to --format ocsf (the jsonl export always has every event)\n"),
                    (["export", "--frobnicate"], "onboard export: unknown option --frobnicate; see onboard export --help\n"),
                    (["export", "--store"], "onboard export: --store needs a value (PATH)\n"),
                    (["import", "x.jsonl", "--commit-every", "0"], "onboard import: --commit-every needs a whole number above 0, got \"0\"\n"),
                    (["verify", "extra"], "onboard verify: expected no arguments, got 1 argument(s); usage: onboard verify [--store PATH]\n")
                ]
                + ["-1", "86401", "18446744073709551616", "5m", ""].map { value in
                    (
                        ["serve", "--port", "0", "--max-clock-skew", value],
                        "onboard serve: --max-clock-skew must be a whole number of seconds from 0 to 86400, got \"\(value)\"\n"
                    )
                }
            for (arguments, message) in cases {
                let result = try CLI.run(arguments)
                #expect(result.status == 64, "\(arguments)")
                #expect(result.stderr == message, "\(arguments)")
                #expect(result.stdout.isEmpty, "\(arguments)")
            }
            let bare = try CLI.run([])
            #expect(bare.status == 64)
            #expect(bare.stderr.contains("Usage: onboard COMMAND"))
        }
    }

    @Test func versionNamesTheFormat() async throws {
        try await onOwnThread {
            let result = try CLI.run(["--version"])
            #expect(result.status == 0)
            #expect(result.stdout.hasPrefix("onboard "))
            #expect(result.stdout.contains("store format 2"))
        }
    }
}
