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
    }

    /// The lockout lab's replay path (docs/lab.md § How a replay works): every record's
    /// ``LockoutInput`` straight from the stored bytes, in log order, inside one read
    /// transaction. It reads the type code first and skips every record no lockout looks at; it
    /// decodes only the fields a lockout needs; it checks **no hash**; it runs no projection.
    /// A sealed client address costs a secretbox open, so it is read only with `addresses`.
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
                    case .skipped: break
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

/// Reads the few fields of a stored record a lockout needs (docs/format.md: header, then type
/// code, schema, seq, id, time, device, user, session, sealed section, payload).
private struct LockoutRecordReader {
    enum Outcome {
        case input(LockoutInput)
        case skipped
        case sealedUnopened(LockoutInput)
        case damaged
    }

    let bytes: UnsafeRawBufferPointer
    var offset = RecordCodec.headerByteCount

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func integer(_ count: Int) -> UInt64? {
        guard offset + count <= bytes.count else { return nil }
        var value: UInt64 = 0
        for index in offset..<offset + count { value = value << 8 | UInt64(bytes[index]) }
        offset += count
        return value
    }

    mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, offset + count <= bytes.count else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    mutating func read(
        users: UserDirectory, addresses: Bool, names: inout [UserRef: String],
        lastDevice: inout [UInt8], lastDeviceName: inout String
    ) -> Outcome {
        guard bytes.count > RecordCodec.headerByteCount, bytes[0] == RecordCodec.formatVersion,
            let code = integer(2), let type = EventType(code: UInt16(code))
        else { return .damaged }
        let kind: LockoutInput.Kind
        switch type {
        case .signInFailed: kind = .passwordFailure
        case .secondFactorFailed: kind = .secondFactorFailure
        case .signInSucceeded: kind = .signInSucceeded
        case .passcodeResetCompleted: kind = .passcodeResetCompleted
        case .passwordChanged: kind = .passwordChanged
        case .lockoutCleared: kind = .lockoutCleared
        default: return .skipped
        }
        guard let schema = byte(), schema >= 1, schema <= type.schemaVersion, take(8 + 16) != nil,
            let milliseconds = integer(8), let deviceLength = byte(), let device = take(Int(deviceLength)),
            let hasUser = byte(), hasUser <= 1
        else { return .damaged }
        let deviceName: String
        if device.elementsEqual(lastDevice) {
            deviceName = lastDeviceName
        } else {
            deviceName = String(decoding: device, as: UTF8.self)
            lastDevice = Array(device)
            lastDeviceName = deviceName
        }
        var user: String?
        var ref: UserRef?
        if hasUser == 1 {
            guard let refBytes = take(UserRef.byteCount) else { return .damaged }
            let decoded = UserRef(bytes: refBytes)
            ref = decoded
            if let name = names[decoded] {
                user = name
            } else {
                let name = users.displayName(of: decoded)
                names[decoded] = name
                user = name
            }
        }
        guard let hasSession = byte(), hasSession <= 1, hasSession == 0 || take(16) != nil else { return .damaged }
        var address: String?
        var unopened = false
        // The sealed section comes before the payload; it is opened (a secretbox each) only once
        // the payload shows the attempt counts.
        var sealed: UnsafeRawBufferPointer?
        if ref != nil, type.hasPersonalFields(schema: schema) {
            guard let sealedPresence = byte(), sealedPresence <= 1 else { return .damaged }
            if sealedPresence == 1 {
                guard let length = integer(2), let section = take(Int(length)) else { return .damaged }
                sealed = section
            }
        }
        var method = SignInMethod.password
        switch kind {
        case .passwordFailure:
            guard let methodCode = byte(), Int(methodCode) < LockoutWireCases.methods.count,
                let reasonCode = byte(), Int(reasonCode) < LockoutWireCases.counted.count
            else { return .damaged }
            guard LockoutWireCases.counted[Int(reasonCode)] else { return .skipped }
            method = LockoutWireCases.methods[Int(methodCode)]
            if ref == nil, schema == 2, addresses, let clear = clearAddress() { address = clear }
        case .signInSucceeded:
            guard byte() != nil, byte() != nil else { return .damaged }
            if ref == nil, schema == 2, addresses, let clear = clearAddress() { address = clear }
        default:
            break
        }
        // Only attempts by password keep an address (LockoutInput's rule).
        if let sealed, let ref, addresses, kind == .passwordFailure || kind == .signInSucceeded {
            if let key = users.key(of: ref), let plaintext = PersonalData.open(sealed, key: key),
                plaintext.count >= 3, plaintext[0] == 1
            {
                address = String(decoding: plaintext[3...], as: UTF8.self)
            } else {
                unopened = true
            }
        }
        let input = LockoutInput(
            kind: kind, method: method, user: user, device: deviceName,
            at: Timestamp(millisecondsSince1970: Int64(bitPattern: milliseconds)), address: address)
        return unopened ? .sealedUnopened(input) : .input(input)
    }

    /// A client address stored in the clear (a record with no user).
    mutating func clearAddress() -> String? {
        guard byte() == 1, let length = integer(2), let text = take(Int(length)) else { return nil }
        return String(decoding: text, as: UTF8.self)
    }
}

/// The enums' cases, built once (`allCases` builds an array per call).
private enum LockoutWireCases {
    static let methods = SignInMethod.allCases
    static let counted = SignInFailureReason.allCases.map(\.isCountedFailure)
}
