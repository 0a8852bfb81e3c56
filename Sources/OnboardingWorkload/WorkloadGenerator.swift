import Foundation
import OnboardingModel
import OnboardingProjections

/// A seeded, deterministic stream of realistic onboarding and sign-in events over simulated time.
///
/// Streaming: it holds only a few bytes per simulated party and per kiosk, and the events of the
/// next half minute of simulated time, so 10^7 events never sit in memory. Deterministic:
/// ``WorkloadSpec`` (seed and parameters) fixes every id, time and payload; the same spec gives
/// the same JSONL byte for byte, on every platform (integer arithmetic only, its own
/// ``WorkloadRandom``). Every event passes `Event.validate()`, and times never decrease (across
/// the whole stream, hence per device).
///
/// Two layers. The sign-in traffic: every party asks a `LockoutEngine` (fed with the stream so
/// far, under ``WorkloadSpec/policy``) before an attempt, as the app would, and records a refused
/// one as `sign_in_throttled`. Over it, unless ``WorkloadSpec/formEvents`` is off, what honest
/// users' forms report (fields filled, "Forgot password?", failed reset requests) and newcomers
/// creating accounts. Those draw from random streams of their own and only add events between
/// the sign-in ones (no lockout counts them), so the sign-in traffic is the same event for event
/// with or without them; to date a form event before the sign-in event it leads to, the
/// generator looks ``formLeadMilliseconds`` of simulated time ahead.
///
/// ```swift
/// for event in WorkloadGenerator(spec: WorkloadSpec(eventCount: 10_000, seed: 42)) {
///     print(EventJSON.encode(event, seq: nil))
/// }
/// ```
public struct WorkloadGenerator: Sequence, IteratorProtocol {
    /// How long before the sign-in event it leads to a form event may be dated: a user fills a
    /// sign-in or reset form within half a minute of sending it. Also the look-ahead: the
    /// generator holds the events of this much simulated time (a handful at the default rates,
    /// about 50,000 at 10^9 events a week).
    static let formLeadMilliseconds: Int64 = 30_000

    public let spec: WorkloadSpec
    /// Events returned so far.
    public private(set) var generatedCount = 0
    /// The account the brute-force attacker guesses.
    public var bruteForceTarget: String { traffic.bruteForceTarget }

    private var traffic: SignInTraffic
    private var form: FormTraffic?
    private var signUps: SignUpTraffic?
    /// Events laid out, not yet returned.
    private var pending = PendingEvents()
    /// The time of the last event taken from `traffic`: no event still to come is dated before
    /// this minus `lead`.
    private var frontier: Int64
    private let lead: Int64
    private var trafficEnded = false
    /// Stop at the first sign-in event after this time (the effectiveness report runs by time).
    private let stopAfter: Int64?
    private var lastMilliseconds: Int64

    public init(spec: WorkloadSpec) {
        self.init(spec: spec, stopAfter: nil, attackGaps: nil)
    }

    init(spec: WorkloadSpec, stopAfter: Int64?, attackGaps: (bruteForce: Int64, stuffing: Int64, spraying: Int64)?) {
        self.spec = spec
        self.stopAfter = stopAfter
        traffic = SignInTraffic(spec: spec, stopAfter: stopAfter, attackGaps: attackGaps)
        let start = spec.start.millisecondsSince1970
        if spec.formEvents {
            form = FormTraffic(seed: spec.seed, agentCount: traffic.agentCount, start: start)
            if let gap = traffic.honestGapMilliseconds {
                signUps = SignUpTraffic(seed: spec.seed, start: start, honestGapMilliseconds: gap)
            }
        }
        lead = spec.formEvents ? WorkloadGenerator.formLeadMilliseconds : 0
        frontier = start - 1
        lastMilliseconds = start
    }

    public mutating func next() -> Event? { nextTagged()?.event }

    /// The next event and the party that produced it (a form event's is its flow's).
    public mutating func nextTagged() -> (event: Event, actor: WorkloadActor)? {
        if stopAfter == nil, generatedCount >= spec.eventCount { return nil }
        while true {
            // Every event dated up to `laidOut` is in `pending`: the sign-in traffic comes in time
            // order, and form events lead theirs by at most `lead`.
            let laidOut = trafficEnded ? Int64.max : frontier - lead
            if let next = signUps?.nextStart, next <= laidOut, next <= stopAfter ?? Int64.max {
                for event in signUps!.nextFlow() { pending.add(event, actor: .newcomer) }
                continue
            }
            if let first = pending.first, first.at <= laidOut {
                let entry = pending.removeFirst()
                // A sign-up that began before the end may run past it: the report stops at the end.
                if let stopAfter, entry.at > stopAfter { continue }
                precondition(entry.at >= lastMilliseconds, "generated time went backwards")
                lastMilliseconds = entry.at
                generatedCount += 1
                return (entry.event, entry.actor)
            }
            if trafficEnded { return nil }
            guard let (taken, actor, agent) = traffic.next() else {
                trafficEnded = true
                continue
            }
            var event = taken
            if form != nil {
                for formEvent in form!.lay(&event, actor: actor, agent: agent) { pending.add(formEvent, actor: actor) }
            }
            pending.add(event, actor: actor)
            frontier = event.at.millisecondsSince1970
        }
    }
}
