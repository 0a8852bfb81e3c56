/// What a simulation did, one line per action, without anything that differs between two runs of
/// one seed (hashes, pseudonyms, tokens and the ids the store draws itself are left out). The
/// digest covers every line; the last lines are kept for the failure report.
///
/// ```swift
/// var trace = Trace()
/// trace.add("step 1: sim-d0 records sign_in_started")
/// trace.digest   // FNV-1a 64 of all lines so far
/// ```
struct Trace {
    /// Lines kept for a failure report: enough to see the steps that led to it.
    static let keptLines = 400

    private(set) var digest: UInt64 = 0xCBF2_9CE4_8422_2325
    private(set) var lineCount = 0
    private var recent: [String] = []
    private var next = 0
    /// Whether every line is also printed as it is added (`onboard-sim --verbose`).
    var echo = false

    mutating func add(_ line: String) {
        // FNV-1a 64 (Fowler, Noll, Vo): a fixed, platform-independent hash; equal traces give
        // equal digests, and a change anywhere changes it with overwhelming likelihood.
        for byte in line.utf8 {
            digest ^= UInt64(byte)
            digest = digest &* 0x0000_0100_0000_01B3
        }
        digest ^= 0x0A
        digest = digest &* 0x0000_0100_0000_01B3
        lineCount += 1
        if echo { print(line) }
        if recent.count < Self.keptLines {
            recent.append(line)
        } else {
            recent[next] = line
            next = (next + 1) % Self.keptLines
        }
    }

    /// The kept lines, oldest first.
    var tail: [String] { Array(recent[next...] + recent[..<next]) }
}
