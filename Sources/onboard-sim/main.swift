import Foundation
import OnboardingSimulation

// onboard-sim: the deterministic simulation of devices, network and sync server
// (docs/testing.md § Deterministic simulation). One seed replays one run exactly.

let usage = """
    usage: onboard-sim [--seed N] [--steps M] [--devices D] [--seconds S | --long] [--hostile-server | --lie-rate R]
                       [--undetectable-lies] [--directory DIR] [--database URL] [--verbose] [--keep]

    Runs the simulation of seed N (random when not given) for M steps (default 1000) with up to D
    devices (default 6), checking every invariant after every step. On a broken invariant it
    prints the seed, the step and the steps before it; `--seed N --steps M` replays it exactly.

      --seconds S    run seed after seed (N, N+1, …) for S seconds of real time, stopping at the first failure
      --long         the same for 1,800 seconds
      --hostile-server  a lying server answers \(SimulationOptions.defaultLieRatePerMille) per mille of the requests instead of the real one
      --lie-rate R   the same for R per mille (1 to 1000)
      --undetectable-lies  also the lies no client can catch without signed answers (expected to break invariants)
      --directory    where the stores live (default: /dev/shm when writable, else the temporary directory)
      --database URL the server on PostgreSQL (postgres://…, an empty database) instead of LMDB replicas
      --verbose      print every step as it happens
      --keep         keep the stores after the run

    Exit status: 0 every invariant held, 1 an invariant broke, 64 bad usage, 70 the simulation could not start.
    """

/// `--long`: half an hour of seeds, for a local soak.
let longSeconds = 1_800.0

struct Arguments {
    var seed: UInt64?
    var steps = 1_000
    var devices = 6
    var seconds: Double?
    var directory: String?
    var databaseURL: String?
    var verbose = false
    var keep = false
    var lieRatePerMille = 0
    var undetectableLies = false
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("onboard-sim: \(message)\n".utf8))
    exit(64)
}

func parse(_ arguments: [String]) -> Arguments {
    var parsed = Arguments()
    var index = 0
    func value(_ name: String) -> String {
        index += 1
        guard index < arguments.count else { fail("\(name) needs a value; see onboard-sim --help") }
        return arguments[index]
    }
    while index < arguments.count {
        let argument = arguments[index]
        switch argument {
        case "--help", "-h":
            print(usage)
            exit(0)
        case "--seed":
            guard let seed = UInt64(value(argument)) else { fail("--seed takes a whole number from 0 to \(UInt64.max)") }
            parsed.seed = seed
        case "--steps":
            guard let steps = Int(value(argument)), steps >= 0 else { fail("--steps takes a whole number, 0 or more") }
            parsed.steps = steps
        case "--devices":
            guard let devices = Int(value(argument)), (1...SimulationOptions.maximumDevices).contains(devices) else {
                fail("--devices takes a whole number from 1 to \(SimulationOptions.maximumDevices)")
            }
            parsed.devices = devices
        case "--seconds":
            guard let seconds = Double(value(argument)), seconds > 0, seconds.isFinite else { fail("--seconds takes a positive number") }
            parsed.seconds = seconds
        case "--long":
            parsed.seconds = longSeconds
        case "--hostile-server":
            parsed.lieRatePerMille = SimulationOptions.defaultLieRatePerMille
        case "--lie-rate":
            guard let rate = Int(value(argument)), (1...1000).contains(rate) else { fail("--lie-rate takes a whole number of per mille from 1 to 1000") }
            parsed.lieRatePerMille = rate
        case "--undetectable-lies":
            parsed.undetectableLies = true
        case "--directory":
            parsed.directory = value(argument)
        case "--database":
            parsed.databaseURL = value(argument)
        case "--verbose":
            parsed.verbose = true
        case "--keep":
            parsed.keep = true
        default:
            fail("unknown argument \(argument); see onboard-sim --help")
        }
        index += 1
    }
    if parsed.undetectableLies && parsed.lieRatePerMille == 0 { parsed.lieRatePerMille = SimulationOptions.defaultLieRatePerMille }
    if parsed.databaseURL != nil && parsed.seconds != nil {
        fail("--database runs one seed on one empty database; leave out --seconds and --long")
    }
    return parsed
}

let arguments = parse(Array(CommandLine.arguments.dropFirst()))
var seed = arguments.seed ?? UInt64.random(in: 0...UInt64.max)
let started = Date()
var totalSteps = 0
while true {
    var options = SimulationOptions(seed: seed)
    options.steps = arguments.steps
    options.devices = arguments.devices
    options.directory = arguments.directory
    options.databaseURL = arguments.databaseURL
    options.verbose = arguments.verbose
    options.keepFiles = arguments.keep
    options.lieRatePerMille = arguments.lieRatePerMille
    options.undetectableLies = arguments.undetectableLies
    let runStarted = Date()
    let report = Simulator.run(options)
    let elapsed = Date().timeIntervalSince(runStarted)
    totalSteps += report.stepsRun
    let rate = elapsed > 0 ? Int(Double(report.stepsRun) / elapsed) : 0
    print(
        "seed \(seed): \(report.stepsRun) steps in \(String(format: "%.1f", elapsed)) s (\(rate) steps/s), trace digest \(String(report.traceDigest, radix: 16)) over \(report.traceLineCount) lines"
    )
    print("  \(report.statistics)")
    if arguments.keep { print("  stores kept in \(report.directory)") }
    if let failure = report.failure {
        if failure.invariant == "setup" {
            FileHandle.standardError.write(Data("onboard-sim: \(failure.message)\n".utf8))
            exit(70)
        }
        print("\nthe last steps before the failure:")
        for line in report.traceTail.suffix(80) { print("  \(line)") }
        print("\nFAILED: \(failure)")
        exit(1)
    }
    guard let seconds = arguments.seconds, Date().timeIntervalSince(started) < seconds else { break }
    seed &+= 1
}
if arguments.seconds != nil {
    print("every seed passed: \(totalSteps) steps in \(Int(Date().timeIntervalSince(started))) s")
}
