import OnboardingModel
import OnboardingProjections
import OnboardingStore

/// Who made an attempt, as far as the lab can tell (docs/lab.md § Honest and attacker traffic).
public enum LabParty: Sendable, Hashable {
    /// An honest user: locking them out is a cost. The principal is the user.
    case honest(user: String)
    /// An attacker: every guess let through is a cost. `attack` names the attack, e.g.
    /// `brute force` or `address 203.0.113.9`.
    case attacker(attack: String)
    /// Neither rule applies: replayed, counted toward neither side.
    case unknown
}

/// How the lab told the parties apart.
public enum LabTruth: String, Sendable, Hashable {
    /// The log is a generated workload: its device names say who each party is.
    case generated
    /// A real log: the heuristic of docs/lab.md § Honest and attacker traffic.
    case heuristic
}

/// A log reduced to what a lockout replay needs: one ``LockoutInput`` per event that can change
/// a key, and who made it. Built once, replayed under every policy (``LabReplay``).
///
/// ```swift
/// let log = LabLog(events: store.allRecords().map(\.event))
/// let result = LabReplay.run(log, policy: .mediawiki)
/// ```
public struct LabLog: Sendable {
    public private(set) var inputs: [LockoutInput] = []
    public private(set) var parties: [LabParty] = []
    public private(set) var truth: LabTruth
    /// Events read, including those no lockout looks at.
    public private(set) var eventCount = 0
    public private(set) var firstAt: Timestamp?
    public private(set) var lastAt: Timestamp?
    /// The imports of foreign logs the log records (`log_imported`), in log order.
    public private(set) var imports: [LabImport] = []

    /// Sets the count of events read when the caller read only the events a lockout looks at.
    public mutating func setEventCount(_ count: Int) { eventCount = max(count, inputs.count) }

    /// The days from the first attempt to the last (at least one).
    public var days: Double {
        guard let firstAt, let lastAt else { return 1 }
        return max(1, Double(lastAt.millisecondsSince1970 - firstAt.millisecondsSince1970) / 86_400_000)
    }

    /// Reads `events` (in log order). The parties come from the generated workload's names when
    /// every device has one, else from the heuristic.
    public init(events: some Sequence<Event>) {
        var collected: [LockoutInput] = []
        var count = 0
        var first: Timestamp?, last: Timestamp?
        var allGenerated = true
        var imports: [LabImport] = []
        for event in events {
            count += 1
            if let summary = LabImport(event) { imports.append(summary) }
            guard let input = LockoutInput(event) else { continue }
            first = first.map { min($0, event.at) } ?? event.at
            last = last.map { max($0, event.at) } ?? event.at
            if allGenerated, LabLog.generatedParty(device: input.device, user: input.user) == nil { allGenerated = false }
            collected.append(input)
        }
        self.init(
            inputs: collected, eventCount: count, firstAt: first, lastAt: last,
            truth: allGenerated && !collected.isEmpty ? .generated : .heuristic)
        self.imports = imports
    }

    /// Reads `store` by the lockout-only replay path (no hash check, no projection): see
    /// `OnboardingStore.forEachLockoutInput`. Client addresses are opened only when `addresses`.
    public init(store: OnboardingStore, addresses: Bool = true) throws(StoreError) {
        var inputs: [LockoutInput] = []
        var first: Timestamp?, last: Timestamp?
        var allGenerated = true
        let scan = try store.forEachLockoutInput(addresses: addresses) { input in
            first = first.map { min($0, input.at) } ?? input.at
            last = last.map { max($0, input.at) } ?? input.at
            if allGenerated, LabLog.generatedParty(device: input.device, user: input.user) == nil { allGenerated = false }
            inputs.append(input)
        }
        self.init(
            inputs: inputs, eventCount: scan.records, firstAt: first, lastAt: last,
            truth: allGenerated && !inputs.isEmpty ? .generated : .heuristic)
        damagedRecords = scan.damaged
        imports = scan.imports.compactMap(LabImport.init)
    }

    /// Records the store scan could not parse (left out of the replay; `onboard verify` names them).
    public private(set) var damagedRecords = 0

    public init(inputs: [LockoutInput], eventCount: Int, firstAt: Timestamp?, lastAt: Timestamp?, truth: LabTruth) {
        self.inputs = inputs
        self.eventCount = eventCount
        self.firstAt = firstAt
        self.lastAt = lastAt
        self.truth = truth
        switch truth {
        case .generated: parties = inputs.map { LabLog.generatedParty(device: $0.device, user: $0.user) ?? .unknown }
        case .heuristic: parties = LabLog.heuristicParties(inputs)
        }
    }

    /// The party of a generated workload's device (`onboard generate`): `brute-`, `stuffer-`
    /// and `sprayer-` devices attack; `device-`, `kiosk-` and `signup-` devices are honest.
    static func generatedParty(device: String, user: String?) -> LabParty? {
        if device.hasPrefix("brute-") { return .attacker(attack: "brute force") }
        if device.hasPrefix("stuffer-") { return .attacker(attack: "credential stuffing") }
        if device.hasPrefix("sprayer-") { return .attacker(attack: "password spraying") }
        if device.hasPrefix("device-") || device.hasPrefix("kiosk-") || device.hasPrefix("signup-") {
            return .honest(user: user ?? "(unknown user)")
        }
        return nil
    }

    /// The heuristic for real logs, rule by rule (docs/lab.md § Honest and attacker traffic):
    /// 1. an attempt from an address that never signs anyone in is an attacker's (`address A`);
    /// 2. else an attempt by a user who signs in somewhere in the log is honest (a success
    ///    after failures is someone who mistyped);
    /// 3. else a failure on an account that never signs in (unknown, or someone else's) is an
    ///    attacker's (`accounts that never sign in`);
    /// 4. anything else (a password change of a user who never signs in, say) is unknown.
    static func heuristicParties(_ inputs: [LockoutInput]) -> [LabParty] {
        var succeedingAddresses = Set<String>(), succeedingUsers = Set<String>()
        for input in inputs where input.kind == .signInSucceeded {
            if let address = input.address { succeedingAddresses.insert(address) }
            if let user = input.user { succeedingUsers.insert(user) }
        }
        return inputs.map { input in
            if let address = input.address, address != ClientAddress.erased, !succeedingAddresses.contains(address) {
                return .attacker(attack: "address \(address)")
            }
            if let user = input.user, succeedingUsers.contains(user) { return .honest(user: user) }
            if input.kind == .passwordFailure || input.kind == .secondFactorFailure {
                return .attacker(attack: "accounts that never sign in")
            }
            return .unknown
        }
    }
}
