import Foundation

// onboard-bench: the store against C doing the same LMDB writes, the bare C floor and SQLite,
// alternating in one run (results in docs/benchmarks.md). Not part of `swift test`.
let options = BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
let bench = Bench(options: options)
let machine = Machine.describe()
let runStart = now()

emit("onboard-bench \(options.quick ? "--quick" : "(full)"), \(options.repetitions) alternating repetitions per measurement")
for key in machine.keys.sorted() { emit("  \(key): \(machine[key]!)") }
emit("\n" + Report.header)

if options.runs("append") {
    bench.section("append (store vs C same writes, C floor, SQLite)")
    for relaxed in [false, true] {
        bench.measureAppend(batchSize: 1, eventCount: options.appendEventsBatch1, relaxed: relaxed)
        bench.measureAppend(batchSize: 64, eventCount: options.appendEventsBatch64, relaxed: relaxed)
        bench.measureAppend(batchSize: 1_000, eventCount: options.appendEventsBatch1000, relaxed: relaxed)
    }
}
if options.runs("import") {
    bench.section("import (JSONL through the CLI's importer vs store appends of 1,000)")
    bench.measureImport(eventCount: options.appendEventsBatch1000)
}
if options.runs("rebuild") {
    bench.section("rebuild and history")
    bench.measureRebuildAndHistory()
}
if options.runs("lockout") {
    bench.section("lockout decision")
    bench.measureLockoutDecision()
}
if options.runs("memory") {
    bench.section("memory")
    bench.measureMemory()
}
if options.runs("group") {
    bench.section("group commit (full durability)")
    for appenders in [1, 8, 64] { bench.measureGroupCommit(appenders: appenders) }
}
if options.runs("sync") {
    bench.section("sync (loopback HTTP vs server-local ingest)")
    bench.measureSyncVersusLocalIngest()
}
if options.runs("server") {
    bench.section("server storage (PostgreSQL vs COPY, HTTP and LMDB)")
    bench.measureServerStorage()
}
if options.runs("server-scale") {
    bench.section("server at scale (PostgreSQL)")
    bench.measureServerScale()
}

bench.removeScratch()
let targets = bench.report.results.filter { $0.met != nil }
emit("\n\(targets.filter { $0.met == true }.count) of \(targets.count) measured targets met; whole run \(format(seconds(since: runStart))) s")
if let path = options.jsonPath {
    do {
        try bench.report.writeJSON(to: path, machine: machine)
        emit("wrote \(path)")
    } catch {
        failOperation("cannot write \(path): \(error)")
    }
}
