import Foundation
import OnboardingModel
import OnboardingProjections

/// The sign-in traffic of a generated workload: every party's attempts, resets, second factors
/// and sign-outs over simulated time, without the form events ``WorkloadGenerator`` lays over it.
///
/// Every party asks a `LockoutEngine` (fed with the stream so far, under ``WorkloadSpec/policy``)
/// before an attempt, as the app would: a refused attempt is recorded as `sign_in_throttled`;
/// attackers then wait for the lock's end (or probe hourly when it is permanent), honest users
/// reset their password or passcode once and try again.
///
/// It draws from its own ``WorkloadRandom`` and never looks at the form events, so a seed gives
/// the same sign-in traffic with or without them (the stream of the generator before the form
/// events existed). It never ends by count: ``WorkloadGenerator`` counts the events it returns.
struct SignInTraffic {
    /// Mean pause of a user between two steps of one session (typing, reading): 1–8 s.
    static let typingPauseMilliseconds: ClosedRange<Int64> = 1_000...8_000
    /// A user signs out this long after signing in (when they sign out at all).
    static let signedInMilliseconds: ClosedRange<Int64> = 30_000...1_200_000
    /// A parallel lane of honest sessions should leave at least this much time per event, so a
    /// session (typing pauses, half of them a signed-in stretch of up to 20 minutes, ~5 events)
    /// fits; more lanes are opened for denser workloads.
    static let laneGapFloorMilliseconds: Int64 = 120_000
    /// Lanes per kind of honest traffic: enough for 10^9 events a week, bounded for the heap.
    static let maximumLanes = 4_096
    /// A permanently locked attacker checks back this often.
    static let permanentProbeMilliseconds: Int64 = 3_600_000
    /// The sprayer rests this long after each password has been tried on every account.
    static let sprayRestMilliseconds: Int64 = 3_600_000
    static let stufferDeviceCount = 256
    static let sprayerDeviceCount = 8
    static let leakedAccountCount = 1_000_000

    let spec: WorkloadSpec
    /// The lockout state the simulated app enforces, after every sign-in event generated so far.
    private(set) var engine: LockoutEngine
    /// Events generated so far.
    private(set) var generatedCount = 0
    /// The account the brute-force attacker guesses.
    let bruteForceTarget: String
    /// The mean time between honest sign-in events on personal devices (all lanes together),
    /// `nil` without honest traffic: the pace sign-ups are planned from.
    private(set) var honestGapMilliseconds: Int64?
    /// Stop at the first event after this time (the effectiveness report runs by time, not count).
    var stopAfter: Int64?
    /// Overrides the share-derived pace of the attackers (milliseconds between attempts).
    var attackGaps: (bruteForce: Int64, stuffing: Int64, spraying: Int64)?

    private var random: WorkloadRandom
    private var agents: [WorkloadAgent] = []
    /// Min-heap of agent indices by (nextAt, index): the next event is always the earliest.
    private var heap: [Int] = []
    private let kioskCount: Int
    /// Users already added on each kiosk; rosters fill up as members first come by.
    private var kioskMembersAdded: [UInt8]
    private var sprayIndex = 0
    private var eventMilliseconds: Int64

    init(spec: WorkloadSpec, stopAfter: Int64?, attackGaps: (bruteForce: Int64, stuffing: Int64, spraying: Int64)?) {
        self.spec = spec
        self.stopAfter = stopAfter
        self.attackGaps = attackGaps
        engine = LockoutEngine(policy: spec.policy, acrossDevices: spec.globalLockout)
        random = WorkloadRandom(seed: spec.seed)
        kioskCount = Swift.max(1, spec.deviceCount / 10)
        kioskMembersAdded = Array(repeating: 0, count: kioskCount)
        eventMilliseconds = spec.start.millisecondsSince1970
        bruteForceTarget = WorkloadNames.user(random.below(spec.userCount))

        let mix = spec.mix
        let start = spec.start.millisecondsSince1970
        /// Mean time between events of one kind if `weight` of the mix goes to it.
        func gap(_ weight: Int) -> Int64 {
            let events = Swift.max(1, Int64(spec.eventCount) * Int64(weight) / Int64(Swift.max(1, mix.total)))
            return Swift.max(1, spec.spanMilliseconds / events)
        }
        func addLanes(_ actor: WorkloadActor, weight: Int) {
            guard weight > 0 else { return }
            let kindGap = gap(weight)
            let lanes = Swift.min(SignInTraffic.maximumLanes, Swift.max(1, Int(SignInTraffic.laneGapFloorMilliseconds / kindGap) + 1))
            for _ in 0..<lanes {
                let laneGap = kindGap * Int64(lanes)
                agents.append(
                    WorkloadAgent(
                        actor: actor, nextAt: start + random.between(0...Swift.min(laneGap, spec.spanMilliseconds)),
                        gapMilliseconds: laneGap))
            }
        }
        if mix.honest > 0 { honestGapMilliseconds = gap(mix.honest) }
        addLanes(.honest, weight: mix.honest)
        addLanes(.sharedDevice, weight: mix.sharedDevice)
        if mix.bruteForce > 0 {
            agents.append(
                WorkloadAgent(
                    actor: .bruteForce, nextAt: start + random.between(0...60_000),
                    gapMilliseconds: attackGaps?.bruteForce ?? gap(mix.bruteForce)))
        }
        if mix.stuffing > 0 {
            agents.append(
                WorkloadAgent(
                    actor: .stuffing, nextAt: start + random.between(0...60_000),
                    gapMilliseconds: attackGaps?.stuffing ?? gap(mix.stuffing)))
        }
        if mix.spraying > 0 {
            agents.append(
                WorkloadAgent(
                    actor: .spraying, nextAt: start + random.between(0...60_000),
                    gapMilliseconds: attackGaps?.spraying ?? gap(mix.spraying)))
        }
        precondition(!agents.isEmpty, "a workload mix needs at least one positive weight")
        for index in agents.indices { push(index) }
    }

    /// Parties (lanes of honest traffic and attackers): the `agent` numbers ``next()`` gives are below this.
    var agentCount: Int { agents.count }

    /// The next sign-in event, the party that produced it and that party's number (each party's
    /// events come in its own order, one session after another).
    mutating func next() -> (event: Event, actor: WorkloadActor, agent: Int)? {
        guard let index = heap.first else { return nil }
        if let stopAfter, agents[index].nextAt > stopAfter { return nil }
        popFirst()
        // Take the agent out (its plan too, so the array stays uniquely referenced), step, put back.
        var agent = agents[index]
        agents[index].plan = []
        let event = step(&agent)
        agents[index] = agent
        push(index)
        precondition(event.at.millisecondsSince1970 >= eventMilliseconds, "generated time went backwards")
        eventMilliseconds = event.at.millisecondsSince1970
        generatedCount += 1
        engine.apply(Record(seq: UInt64(generatedCount), event: event, previousHash: .zero, hash: .zero))
        return (event, agents[index].actor, index)
    }

    // MARK: One step of one party

    private mutating func step(_ agent: inout WorkloadAgent) -> Event {
        switch agent.actor {
        case .honest, .sharedDevice: return honestStep(&agent)
        case .bruteForce:
            return attack(&agent, user: bruteForceTarget, device: WorkloadNames.bruteForceDevice, reason: .invalidPassword)
        case .stuffing:
            let known = random.chance(perMille: 600)
            let user =
                known
                ? WorkloadNames.user(random.below(spec.userCount))
                : WorkloadNames.leaked(random.below(SignInTraffic.leakedAccountCount))
            let device = WorkloadNames.stuffer(random.below(SignInTraffic.stufferDeviceCount))
            return attack(&agent, user: user, device: device, reason: known ? .invalidPassword : .unknownUser)
        case .spraying:
            let account = sprayIndex % spec.userCount
            sprayIndex += 1
            let event = attack(
                &agent, user: WorkloadNames.user(account),
                device: WorkloadNames.sprayer(account % SignInTraffic.sprayerDeviceCount), reason: .invalidPassword)
            if sprayIndex % spec.userCount == 0 { agent.nextAt += SignInTraffic.sprayRestMilliseconds }
            return event
        case .newcomer:
            preconditionFailure("newcomers are SignUpTraffic's, never a party of the sign-in traffic")
        }
    }

    /// One attacker attempt: a counted failure when allowed, else `sign_in_throttled` and a wait.
    private mutating func attack(
        _ agent: inout WorkloadAgent, user: String, device: String,
        reason: SignInFailureReason
    ) -> Event {
        let at = agent.nextAt
        let pace = Swift.max(1, random.between(agent.gapMilliseconds / 2...agent.gapMilliseconds * 3 / 2))
        let payload: Payload
        switch engine.decide(engine.key(user: user, device: device, factor: .password), at: Timestamp(millisecondsSince1970: at)) {
        case .allowed:
            payload = .signInFailed(method: .password, reason: reason)
            agent.nextAt = at + pace
        case .locked(let lock):
            payload = .signInThrottled(method: .password, retryAfter: lock.until)
            agent.nextAt = Swift.max(lock.until.millisecondsSince1970, at + pace)
        case .permanentlyLocked:
            payload = .signInThrottled(method: .password, retryAfter: Timestamp.maximum)
            agent.nextAt = at + Swift.max(pace, agent.actor == .bruteForce ? SignInTraffic.permanentProbeMilliseconds : pace)
        }
        return Event(
            id: random.uuid(), device: device, at: Timestamp(millisecondsSince1970: at), user: user,
            flow: random.uuid(), payload: payload)
    }

    private mutating func honestStep(_ agent: inout WorkloadAgent) -> Event {
        if agent.isBetweenSessions { startSession(&agent) }
        let at = Timestamp(millisecondsSince1970: agent.nextAt)
        let step = agent.plan[agent.planIndex]
        agent.planIndex += 1
        let payload: Payload
        switch step {
        case .emit(let fixed):
            payload = fixed
        case let .attempt(method, succeeds, secondFactor):
            let decision = engine.decide(engine.key(user: agent.user, device: agent.device, factor: .password), at: at)
            if !decision.isAllowed {
                payload = throttled(method: method, decision: decision)
                recover(&agent, method: method)
            } else if succeeds {
                payload = secondFactor ? .secondFactorRequired(method: .totp) : .signInSucceeded(method: method, secondFactor: false)
            } else {
                payload = .signInFailed(method: method, reason: method == .passcode ? .invalidPasscode : .invalidPassword)
            }
        case .code(let succeeds):
            let decision = engine.decide(engine.key(user: agent.user, device: agent.device, factor: .secondFactor), at: at)
            if !decision.isAllowed {
                payload = throttled(method: .password, decision: decision)
                agent.planIndex = agent.plan.count
            } else {
                payload = succeeds ? .secondFactorSucceeded(method: .totp) : .secondFactorFailed(method: .totp)
            }
        }
        let event = Event(id: random.uuid(), device: agent.device, at: at, user: agent.user, flow: agent.session, payload: payload)
        if agent.isBetweenSessions {
            agent.nextAt += sessionPause(agent)
        } else if case .emit(.signedOut) = agent.plan[agent.planIndex] {
            agent.nextAt += random.between(SignInTraffic.signedInMilliseconds)
        } else {
            agent.nextAt += random.between(SignInTraffic.typingPauseMilliseconds)
        }
        return event
    }

    private func throttled(method: SignInMethod, decision: LockoutDecision) -> Payload {
        switch decision {
        case .locked(let lock): .signInThrottled(method: method, retryAfter: lock.until)
        default: .signInThrottled(method: method, retryAfter: Timestamp.maximum)
        }
    }

    /// After meeting a lock, an honest user resets the credential once and tries again.
    private func recover(_ agent: inout WorkloadAgent, method: SignInMethod) {
        guard !agent.hasRecovered else {
            agent.planIndex = agent.plan.count
            return
        }
        agent.hasRecovered = true
        let reset: [WorkloadAgent.Step] =
            method == .passcode
            ? [.emit(.passcodeResetStarted), .emit(.passcodeResetCompleted)]
            : [.emit(.passwordResetRequested(route: .email)), .emit(.temporaryPasswordSent), .emit(.passwordChanged(forced: true))]
        agent.plan = Array(agent.plan[..<agent.planIndex]) + reset + [.attempt(method, succeeds: true, secondFactor: false)]
    }

    /// The pause before the next session, so the lane keeps its planned event rate.
    private mutating func sessionPause(_ agent: WorkloadAgent) -> Int64 {
        let planned = agent.gapMilliseconds * Int64(agent.plan.count)
        let taken = agent.nextAt - agent.sessionStartedAt
        return random.between(0...Swift.max(1, 2 * (planned - taken)))
    }

    private mutating func startSession(_ agent: inout WorkloadAgent) {
        agent.planIndex = 0
        agent.hasRecovered = false
        agent.sessionStartedAt = agent.nextAt
        agent.session = random.uuid()
        var plan: [WorkloadAgent.Step] = []
        if agent.actor == .sharedDevice {
            let kiosk = random.below(kioskCount)
            let rosterSize = 4 + (kiosk &* 7) % 9
            var member = random.below(rosterSize)
            agent.device = WorkloadNames.kiosk(kiosk)
            if member >= Int(kioskMembersAdded[kiosk]) {
                member = Int(kioskMembersAdded[kiosk])
                kioskMembersAdded[kiosk] += 1
                let numeric = random.chance(perMille: 800)
                plan += [
                    .emit(
                        .userAdded(
                            displayName: WorkloadNames.displayName(kiosk: kiosk, member: member),
                            subtitle: WorkloadNames.subtitle(kiosk: kiosk, member: member), imageRef: nil,
                            passcodePolicy: numeric ? .numeric : .alphanumeric, passcodeMinLength: numeric ? 6 : 8)),
                    .emit(.passcodeSet)
                ]
            }
            agent.user = WorkloadNames.staff(kiosk: kiosk, member: member)
            plan += [.emit(.userSelected), .emit(.signInStarted(method: .passcode))]
            let roll = random.below(1000)
            let failures = roll < 5 ? 8 + random.below(5) : roll < 85 ? 1 + random.below(2) : 0
            plan += Array(repeating: .attempt(.passcode, succeeds: false, secondFactor: false), count: failures)
            plan.append(.attempt(.passcode, succeeds: true, secondFactor: false))
            if random.chance(perMille: 700) { plan.append(.emit(.signedOut(reason: .user))) }
        } else {
            let user = random.below(spec.userCount)
            agent.user = WorkloadNames.user(user)
            agent.device = WorkloadNames.device(user % spec.deviceCount)
            plan.append(.emit(.signInStarted(method: .password)))
            let roll = random.below(1000)
            if roll < 30 {
                // Forgot the password: the reset flow, then a sign-in with the new one.
                plan += [
                    .emit(.passwordResetRequested(route: random.chance(perMille: 500) ? .email : .username)),
                    .emit(.temporaryPasswordSent), .emit(.passwordChanged(forced: true))
                ]
            } else if roll < 40 {
                // Half-remembers it: several wrong guesses, then the reset flow.
                plan += Array(repeating: .attempt(.password, succeeds: false, secondFactor: false), count: 2 + random.below(5))
                plan += [
                    .emit(.passwordResetRequested(route: .email)), .emit(.temporaryPasswordSent),
                    .emit(.passwordChanged(forced: true))
                ]
            } else if roll < 140 {
                plan += Array(repeating: .attempt(.password, succeeds: false, secondFactor: false), count: 1 + random.below(2))
            }
            let twoFactor = user % 4 == 0
            plan.append(.attempt(.password, succeeds: true, secondFactor: twoFactor))
            if twoFactor {
                if random.chance(perMille: 80) { plan.append(.code(succeeds: false)) }
                plan += [.code(succeeds: true), .emit(.signInSucceeded(method: .password, secondFactor: true))]
            }
            if random.chance(perMille: 500) { plan.append(.emit(.signedOut(reason: .user))) }
        }
        agent.plan = plan
    }

    // MARK: Heap of agents by next time

    private func earlier(_ left: Int, _ right: Int) -> Bool {
        (agents[left].nextAt, left) < (agents[right].nextAt, right)
    }

    private mutating func push(_ index: Int) {
        heap.append(index)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard earlier(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, earlier(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, earlier(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
