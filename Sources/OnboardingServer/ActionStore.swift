import Foundation
import LMDB
import OnboardingModel
import OnboardingProjections
import OnboardingStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The server actions of an LMDB-backed server (``ServerAction``), in their own small LMDB
/// environment, `DATA/actions`: database `actions` maps the seq (`u64` big-endian) to the action
/// as JSON, its user and reason sealed (libsodium secretbox) under the key in database `meta`,
/// so the file holds no readable user id. Every action is also kept in memory (an
/// administrator's actions are few). Forgetting a user rewrites their actions (the pseudonym,
/// no reason) and compacts the file, so the old pages with the sealed id are not left in it.
///
/// ```swift
/// let actions = try ActionStore(directory: data + "/actions")
/// let stored = try actions.record(ServerAction(kind: .lockoutCleared, at: now, actor: actor, user: "alice", reason: "ticket 7"))
/// actions.all().last == stored   // true
/// ```
final class ActionStore: Sendable {
    private struct State: ~Copyable {
        var environment: Environment
        var databases: (meta: Database, actions: Database)
        var actions: [ServerAction]
    }

    private let directory: String
    private let sealKey: SecretKey
    private let state: Mutex<State>

    init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let (environment, databases) = try Self.open(directory)
        let key = try environment.write { transaction -> [UInt8] in
            if let existing = try transaction.get(databases.meta, key: Self.sealKeyName) { return existing }
            let fresh = SecretKey.random().bytes
            try transaction.put(databases.meta, key: Self.sealKeyName, value: fresh)
            return fresh
        }
        guard key.count == SecretKey.byteCount else {
            environment.close()
            throw StoreError(.corrupted, "the server actions' sealing key has \(key.count) bytes; restore DATA/actions from a backup")
        }
        sealKey = SecretKey(bytes: key)
        let actions = try environment.read { transaction in
            try transaction.withCursor(databases.actions) { cursor -> [ServerAction] in
                var found: [ServerAction] = []
                var entry = try cursor.first()
                while let current = entry {
                    guard let action = Self.decode(Array(current.value), key: SecretKey(bytes: key)) else {
                        throw StoreError(.corrupted, "a server action in DATA/actions cannot be read; restore it from a backup")
                    }
                    found.append(action)
                    entry = try cursor.next()
                }
                return found
            }
        }
        state = Mutex(State(environment: environment, databases: databases, actions: actions))
    }

    private static let sealKeyName = Array("seal_key".utf8)

    private static func open(_ directory: String) throws -> (Environment, (meta: Database, actions: Database)) {
        let environment = try Environment.open(path: directory)
        let created = try environment.createDatabases(["meta", "actions"]) { _, _ in }
        return (environment, (created[0], created[1]))
    }

    func close() { state.withLock { $0.environment.close() } }

    /// Every action, in seq order.
    func all() -> [ServerAction] { state.withLock { $0.actions } }

    /// Stores `action` durably at the next seq and returns it with that seq.
    func record(_ action: ServerAction) throws -> ServerAction {
        try state.withLock { state in
            var stored = action
            stored.seq = (state.actions.last?.seq ?? 0) + 1
            let value = encode(stored)
            let databases = state.databases
            try state.environment.write { transaction in
                try transaction.put(databases.actions, key: Self.key(stored.seq), value: value, flags: .noOverwrite)
            }
            state.actions.append(stored)
            return stored
        }
    }

    /// Rewrites every action naming `user` as forgotten under `pseudonym`, then compacts the
    /// file; returns how many there were.
    @discardableResult
    func forget(user: String, as pseudonym: String) throws -> Int {
        try state.withLock { state in
            let doomed = state.actions.indices.filter { state.actions[$0].user == user }
            guard !doomed.isEmpty else { return 0 }
            let rewritten = doomed.map { state.actions[$0].forgotten(as: pseudonym) }
            let databases = state.databases
            try state.environment.write { transaction in
                for action in rewritten { try transaction.put(databases.actions, key: Self.key(action.seq), value: encode(action)) }
            }
            for (index, action) in zip(doomed, rewritten) { state.actions[index] = action }
            try compact(&state)
            return doomed.count
        }
    }

    /// LMDB frees the old pages instead of wiping them: a compacted copy (only pages in use)
    /// replaces the file, and the environment is opened again on it.
    private func compact(_ state: inout State) throws {
        let dataFile = (directory as NSString).appendingPathComponent("data.mdb")
        let compacted = dataFile + ".compacting"
        try? FileManager.default.removeItem(atPath: compacted)
        try state.environment.copyCompacted(toFile: compacted)
        state.environment.close()
        let renamed = rename(compacted, dataFile) == 0
        let (environment, databases) = try Self.open(directory)
        state.environment = environment
        state.databases = databases
        guard renamed else {
            try? FileManager.default.removeItem(atPath: compacted)
            throw StoreError(
                .storage,
                "cannot replace DATA/actions with its compacted copy (\(String(cString: strerror(errno)))); the forgotten user's actions are rewritten, but their old pages stay in the file until it is compacted"
            )
        }
    }

    private static func key(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }

    private func encode(_ action: ServerAction) -> [UInt8] {
        let personal = action.user == nil && action.reason == nil ? nil : PersonalData.sealRandom(action.personalBytes, key: sealKey)
        func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        return SyncWire.encode(
            .object([
                .init("id", .string(action.id.uuidString.lowercased())), .init("seq", .number(String(action.seq))),
                .init("at_ms", .number(String(action.at.millisecondsSince1970))), .init("actor", .string(action.actor)),
                .init("action", .string(action.kind.rawValue)), .init("factor", text(action.factor?.rawValue)),
                .init("device", text(action.device)), .init("token", text(action.token)),
                .init("sealed", personal.map { .string(HexBytes.encode($0)) } ?? .null)
            ]))
    }

    private static func decode(_ bytes: [UInt8], key: SecretKey) -> ServerAction? {
        guard let value = try? JSONValue.parse(bytes: bytes), case .string(let idText)? = value["id"], let id = UUID(uuidString: idText),
            case .number(let seqText)? = value["seq"], let seq = UInt64(seqText),
            case .number(let atText)? = value["at_ms"], let at = Int64(atText),
            case .string(let actor)? = value["actor"], case .string(let kindText)? = value["action"],
            let kind = ServerAction.Kind(rawValue: kindText)
        else { return nil }
        var action = ServerAction(id: id, seq: seq, kind: kind, at: Timestamp(millisecondsSince1970: at), actor: actor)
        action.factor = value["factor"]?.stringValue.flatMap(LockoutFactor.init(rawValue:))
        action.device = value["device"]?.stringValue
        action.token = value["token"]?.stringValue
        if let sealed = value["sealed"]?.stringValue {
            guard let bytes = HexBytes.decode(sealed), let opened = bytes.withUnsafeBytes({ PersonalData.open($0, key: key) }),
                let personal = ServerAction.personal(from: opened)
            else { return nil }
            action.user = personal.user
            action.reason = personal.reason
        }
        return action
    }
}
