// Fuzzes the binary record readers (docs/format.md): `RecordCodec.decode` and `decodeLegacy`,
// the fast body decoder against the reference one, and `userRef(of:)`, `sealedSection(of:)`,
// `links(of:)`. Each input is read twice: as it is (the hash check refuses almost everything)
// and with its hash field set to the hash of its bytes, so the body readers see every mutation.
//
// Properties: no reader traps on any bytes; where the fast decoder reads a body the reference
// decoder reads the same event (and the fast decoder gives up only on sealed personal fields);
// a record that decodes is valid, re-encodes to the same bytes, agrees with the three helpers,
// and its event survives the JSON form.
import Foundation
import FuzzEntry
import FuzzSupport
@testable import OnboardingModel

private let target = "FuzzRecordCodec"
private let users = FuzzFixtures.directory

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecordCodec(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let input = Array(UnsafeRawBufferPointer(start: start, count: count))
    check(input)
    if input.count > RecordCodec.headerByteCount {
        var rehashed = input
        let hash = Digest.hash(Array(input[(1 + Digest.byteCount)...]))
        rehashed.replaceSubrange(1...Digest.byteCount, with: hash.bytes)
        if rehashed != input { check(rehashed) }
    }
    return 0
}

private func check(_ bytes: [UInt8]) {
    func fail(_ message: String) -> Never { FuzzCheck.fail(target, "\(message)\n  record: \(FuzzCheck.hex(bytes))") }

    // The helpers read headers and prefixes of bodies; they may refuse, never trap.
    let ref = bytes.withUnsafeBytes { raw in Result { () throws(RecordDecodingError) in try RecordCodec.userRef(of: raw) } }
    let sealed = bytes.withUnsafeBytes { raw in Result { () throws(RecordDecodingError) in try RecordCodec.sealedSection(of: raw) } }
    let links = bytes.withUnsafeBytes { raw in Result { () throws(RecordDecodingError) in try RecordCodec.links(of: raw) } }
    if case .success(let legacy) = RecordCodec.decodeLegacyResult(bytes) {
        guard bytes[0] == RecordCodec.legacyFormatVersion else { fail("decodeLegacy read a record of version \(bytes[0])") }
        do { try legacy.event.validate() } catch { fail("decodeLegacy returned an invalid event: \(error)") }
    }

    if bytes.count > RecordCodec.headerByteCount {
        checkDecodersAgree(Array(bytes[RecordCodec.headerByteCount...]), fail)
    }

    let record: Record
    do { record = try RecordCodec.decode(bytes, users: users) } catch { return }
    let event = record.event
    do { try event.validate() } catch { fail("decode returned an invalid event: \(error)") }

    guard case .success(let linked) = links, linked.hash == record.hash, linked.previous == record.previousHash else {
        fail("links(of:) disagrees with decode: \(links)")
    }
    guard case .success(let namedRef) = ref else { fail("userRef(of:) refuses a record decode reads: \(ref)") }
    switch (namedRef, event.user) {
    case (nil, nil): break
    case (let namedRef?, let user?) where users.displayName(of: namedRef) == user: break
    default: fail("userRef(of:) says \(String(describing: namedRef)), decode read user \(String(describing: event.user))")
    }
    guard case .success(let section) = sealed else { fail("sealedSection(of:) refuses a record decode reads: \(sealed)") }
    if section != nil && !(event.user != nil && event.hasPersonalFields) {
        fail("sealedSection(of:) found a sealed section in a \(event.type.rawValue) record without one")
    }

    // The stored form is canonical: writing the decoded event again gives the same bytes.
    let seal = namedRef.map { namedRef in
        let key = users.key(of: namedRef)
        return UserSeal(ref: namedRef, key: key, sealed: key == nil ? section : nil)
    }
    let encoded = RecordCodec.encode(event, seq: record.seq, previousHash: record.previousHash, seal: seal)
    guard encoded == bytes else { fail("re-encoding the decoded event gives other bytes: \(FuzzCheck.hex(encoded))") }

    do {
        _ = try RecordCodec.decode(bytes, expectedSeq: record.seq &+ 1, users: users)
        fail("decode with another expected seq accepted seq \(record.seq)")
    } catch  where error.reason == .misplaced(storedSeq: record.seq) {
    } catch {
        fail("decode with another expected seq failed with \(error) instead of naming the stored seq")
    }

    // What the store holds exports to a line that imports back to the same event.
    let line = EventJSON.encode(event, seq: record.seq)
    do {
        let back = try EventJSON.decode(line: line)
        guard back.event == event, back.seq == record.seq, EventJSON.encode(back.event, seq: back.seq) == line else {
            fail("the JSON line \(line) reads back as another event")
        }
    } catch {
        fail("the JSON line of a stored record does not import: \(error)\n  line: \(line)")
    }
}

/// The fast path must never read an event the reference decoder would not, nor another one.
private func checkDecodersAgree(_ body: [UInt8], _ fail: (String) -> Never) {
    body.withUnsafeBytes { raw in
        let fast = RecordCodec.fastDecodeBody(raw, users: users)
        let reference = Result { () throws(RecordDecodingError) in try RecordCodec.referenceDecodeBody(raw, users: users) }
        switch (fast, reference) {
        case (nil, .failure): return
        case (let fast?, .failure(let error)):
            fail("the fast decoder read seq \(fast.0) \(EventJSON.encode(fast.1, seq: fast.0)) from a body the reference decoder refuses: \(error)")
        case (nil, .success(let read)):
            // The documented give-ups: sealed personal fields, and a client address in the clear,
            // are read by the reference decoder.
            if read.1.user != nil && read.1.hasPersonalFields { return }
            if read.1.payload.clientAddress != nil { return }
            fail("the fast decoder gave up on a body the reference decoder reads: \(EventJSON.encode(read.1, seq: read.0))")
        case (let fast?, .success(let read)):
            // Compared as canonical JSON bytes: `String ==` would accept a differently normalised text.
            guard fast.0 == read.0, fast.1 == read.1,
                Array(EventJSON.encode(fast.1, seq: fast.0).utf8) == Array(EventJSON.encode(read.1, seq: read.0).utf8)
            else {
                fail("the decoders disagree:\n  fast:      \(EventJSON.encode(fast.1, seq: fast.0))\n  reference: \(EventJSON.encode(read.1, seq: read.0))")
            }
        }
    }
}

extension RecordCodec {
    fileprivate static func decodeLegacyResult(_ bytes: [UInt8]) -> Result<Record, RecordDecodingError> {
        bytes.withUnsafeBytes { raw in Result { () throws(RecordDecodingError) in try decodeLegacy(raw) } }
    }
}

/// See ``FuzzEntry``: SwiftPM's entry point for this executable, handed to libFuzzer's driver.
@_cdecl("FuzzRecordCodec_main")
public func fuzzRecordCodecMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzEntry.run(argc, argv, fuzzRecordCodec)
}
