import Foundation
import OnboardingModel
import OnboardingProjections

extension OnboardingStore {
    /// What ``forEachLockoutInput(addresses:_:)`` read.
    package struct LockoutScan: Sendable {
        /// Records read, lockout inputs or not.
        package var records = 0
        /// Records whose bytes did not parse (left out; `onboard verify` names them).
        package var damaged = 0
        /// Sealed client addresses that did not open (their user forgotten): read as none.
        package var sealedUnopened = 0
        /// The `log_imported` events, in log order: what each import of a foreign log left out
        /// (few: one per import), decoded whole and hash-checked, unlike the attempts.
        package var imports: [Event] = []
    }

    /// The lockout lab's replay path (docs/lab.md § How a replay works): every record's
    /// ``LockoutInput`` straight from the stored bytes, in log order, inside one read
    /// transaction. It reads the type code first and skips every record no lockout looks at; it
    /// decodes only the fields a lockout needs; it checks **no hash**; it runs no projection.
    /// A sealed client address costs a secretbox open, so it is read only with `addresses`. The
    /// `log_imported` summaries are collected on the way (``LockoutScan/imports``).
    package func forEachLockoutInput(addresses: Bool, _ body: (LockoutInput) -> Void) throws(StoreError) -> LockoutScan {
        var scan = LockoutScan()
        try reading { transaction in
            let users = users
            var names: [UserRef: String] = [:]
            var lastDevice: [UInt8] = [], lastDeviceName = ""
            try transaction.withCursor(databases.events) { cursor in
                var entry = try cursor.first()
                while let current = entry {
                    scan.records += 1
                    var reader = LockoutRecordReader(bytes: current.value)
                    switch reader.read(
                        users: users, addresses: addresses, names: &names, lastDevice: &lastDevice,
                        lastDeviceName: &lastDeviceName)
                    {
                    case .input(let input): body(input)
                    case .skipped:
                        // A type code costs two loads: the rare summary is decoded whole.
                        if StoredRecordParts.type(of: current.value) == .logImported {
                            do { scan.imports.append(try decodeStored(key: current.key, value: current.value, users: users).event) } catch {
                                scan.damaged += 1
                            }
                        }
                    case .sealedUnopened(let input):
                        scan.sealedUnopened += 1
                        body(input)
                    case .damaged: scan.damaged += 1
                    }
                    entry = try cursor.next()
                }
            }
        }
        return scan
    }
}

/// Reads the few fields of a stored record a lockout needs: the envelope and the sealed section
/// through ``StoredRecordParts``, the payload's method, reason and clear address at the offsets
/// the schema table gives (`LockoutWireCases`).
private struct LockoutRecordReader {
    enum Outcome {
        case input(LockoutInput)
        case skipped
        case sealedUnopened(LockoutInput)
        case damaged
    }

    let bytes: UnsafeRawBufferPointer

    mutating func read(
        users: UserDirectory, addresses: Bool, names: inout [UserRef: String],
        lastDevice: inout [UInt8], lastDeviceName: inout String
    ) -> Outcome {
        // The type first: most records are of a type no lockout reads.
        guard let type = StoredRecordParts.type(of: bytes) else { return .damaged }
        let kind: LockoutInput.Kind
        switch type {
        case .signInFailed: kind = .passwordFailure
        case .secondFactorFailed: kind = .secondFactorFailure
        case .signInSucceeded: kind = .signInSucceeded
        case .passcodeResetCompleted: kind = .passcodeResetCompleted
        case .passwordChanged: kind = .passwordChanged
        case .lockoutCleared: kind = .lockoutCleared
        case .signInAborted: kind = .abortedAttempt
        default: return .skipped
        }
        guard let record = StoredRecordParts(bytes) else { return .damaged }
        let payload = record.payload
        var method = SignInMethod.password
        var clearAddress: UnsafeRawBufferPointer?
        // The kinds that keep an address (LockoutInput's rule): failed, aborted and successful sign-ins.
        let layout: LockoutWireCases.PayloadOffsets? =
            switch kind {
            case .passwordFailure: LockoutWireCases.failed
            case .signInSucceeded: LockoutWireCases.succeeded
            case .abortedAttempt: LockoutWireCases.aborted
            default: nil
            }
        if let layout {
            guard payload.count >= layout.fixedByteCount else { return .damaged }
            if let methodOffset = layout.method {
                let methodCode = Int(payload[methodOffset])
                guard methodCode < LockoutWireCases.methods.count else { return .damaged }
                // The failure's method is the engine's; a success is counted whatever its method.
                if kind == .passwordFailure { method = LockoutWireCases.methods[methodCode] }
            }
            if let reason = layout.reason {
                let reasonCode = Int(payload[reason])
                guard reasonCode < layout.countedReasons.count else { return .damaged }
                guard layout.countedReasons[reasonCode] else { return .skipped }
            }
            // A record with no user keeps its address in the clear (schema 2 on).
            if record.user == nil, addresses, let offset = layout.address[Int(record.schema)] {
                clearAddress = Self.text(in: payload, at: offset)
            }
        }
        let deviceName: String
        if record.device.elementsEqual(lastDevice) {
            deviceName = lastDeviceName
        } else {
            deviceName = String(decoding: record.device, as: UTF8.self)
            lastDevice = Array(record.device)
            lastDeviceName = deviceName
        }
        var user: String?
        if let ref = record.user {
            if let name = names[ref] {
                user = name
            } else {
                let name = users.displayName(of: ref)
                names[ref] = name
                user = name
            }
        }
        var address = clearAddress.map { String(decoding: $0, as: UTF8.self) }
        var unopened = false
        // A sealed address costs a secretbox open, so it is opened only now. The address is the
        // section's first field (each of these types has no other personal field).
        if let sealed = record.sealed, let ref = record.user, addresses, layout != nil {
            if let key = users.key(of: ref), let plaintext = PersonalData.open(sealed, key: key),
                plaintext.count >= 3, plaintext[0] == 1
            {
                address = String(decoding: plaintext[3...], as: UTF8.self)
            } else {
                unopened = true
            }
        }
        let input = LockoutInput(kind: kind, method: method, user: user, device: deviceName, at: record.at, address: address)
        return unopened ? .sealedUnopened(input) : .input(input)
    }

    /// An optional text field at `offset`: presence byte, two-byte length, UTF-8.
    private static func text(in payload: UnsafeRawBufferPointer, at offset: Int) -> UnsafeRawBufferPointer? {
        guard offset + 3 <= payload.count, payload[offset] == 1 else { return nil }
        let length = Int(payload[offset + 1]) << 8 | Int(payload[offset + 2])
        guard offset + 3 + length <= payload.count else { return nil }
        return UnsafeRawBufferPointer(rebasing: payload[offset + 3..<offset + 3 + length])
    }
}

/// What the scan reads of a payload, from the schema table once (`allCases` and the offsets
/// would otherwise be computed per record).
enum LockoutWireCases {
    static let methods = SignInMethod.allCases
    static let failed = PayloadOffsets(.signInFailed, method: true, reason: "reason", counted: SignInFailureReason.allCases.map(\.isCountedFailure))
    static let succeeded = PayloadOffsets(.signInSucceeded, method: true)
    /// Every abort reason counts (by address): none is a failure the app could not help.
    static let aborted = PayloadOffsets(.signInAborted, method: false, reason: "reason", counted: SignInAbortReason.allCases.map { _ in true })

    /// Where a sign-in type's method, reason and client address lie in its payload.
    struct PayloadOffsets {
        let method: Int?
        let reason: Int?
        /// By reason code: whether a record with that reason is a lockout input (a code past the
        /// end is damage).
        let countedReasons: [Bool]
        /// By schema: the client address's offset, where the schema holds it.
        let address: [Int: Int]
        /// The bytes up to the last of method and reason.
        let fixedByteCount: Int

        init(_ type: EventType, method hasMethod: Bool, reason reasonName: String? = nil, counted: [Bool] = []) {
            let row = EventSchema.row(type)
            // Every schema keeps the older fields where they were (docs/format.md § Versioning).
            func offset(_ name: String) -> Int {
                guard let offset = row.byteOffset(of: name, schema: 1) else {
                    preconditionFailure("\(type.rawValue): the lockout scan needs a one-byte-aligned \(name) field")
                }
                return offset
            }
            method = hasMethod ? offset("method") : nil
            reason = reasonName.map(offset)
            precondition(reasonName == nil || !counted.isEmpty, "\(type.rawValue): a reason needs its table of counted codes")
            countedReasons = counted
            fixedByteCount = max(method ?? -1, reason ?? -1) + 1
            var address: [Int: Int] = [:]
            for schema in 1...row.version {
                address[Int(schema)] = row.byteOffset(of: ClientAddress.fieldName, schema: schema)
            }
            self.address = address
        }
    }
}
