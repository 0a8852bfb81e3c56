// Fuzzes one JSON event line as `onboard import` reads it (docs/events.md): the line must be
// UTF-8, then `EventJSON.decode(line:)` parses and validates it; and as `onboard record` reads
// it, with defaults for the envelope.
//
// Properties: nothing traps; a line that decodes is a valid event, is JSON by Foundation's
// parser too (import never accepts what another JSON reader would refuse), and re-encodes to a
// canonical line (`EventJSON.encode`) that decodes to the same event and seq and is a fixed point
// of encode ∘ decode.
import Foundation
import FuzzEntry
import FuzzSupport
import OnboardingStore

private let target = "FuzzEventLine"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEventLine(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    guard let line = String(validating: bytes, as: UTF8.self) else { return 0 }
    func fail(_ message: String) -> Never { FuzzCheck.fail(target, "\(message)\n  line: \(FuzzCheck.hex(bytes))") }
    // What import reads (docs/events.md): every envelope member given; and what `onboard record`
    // reads, with defaults for the envelope members it may leave out.
    let imported = try? EventJSON.decode(line: line)
    let recorded = try? EventJSON.decode(line: line, defaults: defaults)
    guard imported != nil || recorded != nil else { return 0 }
    do {
        _ = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
    } catch {
        fail("EventJSON accepted a line Foundation's JSON parser refuses: \(error)")
    }
    for decoded in [imported, recorded].compactMap({ $0 }) {
        checkRoundTrip(decoded, bytes, fail)
    }
    if let imported, let recorded, imported.event != recorded.event || imported.seq != recorded.seq {
        fail("defaults changed an event that needs none")
    }
    return 0
}

private let defaults = EventJSON.Defaults(id: FuzzFixtures.id(0xDEFA), device: FuzzFixtures.device, at: FuzzFixtures.start)

/// A decoded line is a valid event whose canonical line decodes to it again, as a fixed point.
private func checkRoundTrip(_ decoded: EventJSON.Decoded, _ bytes: UnsafeRawBufferPointer, _ fail: (String) -> Never) {
    do { try decoded.event.validate() } catch { fail("decode returned an invalid event: \(error)") }
    if decoded.seq == 0 { fail("decode accepted seq 0") }
    let canonical = EventJSON.encode(decoded.event, seq: decoded.seq)
    let again: EventJSON.Decoded
    do { again = try EventJSON.decode(line: canonical) } catch {
        fail("the canonical line does not decode: \(error)\n  canonical: \(canonical)")
    }
    guard again.event == decoded.event, again.seq == decoded.seq else {
        fail("the canonical line decodes to another event\n  canonical: \(canonical)")
    }
    let twice = EventJSON.encode(again.event, seq: again.seq)
    guard Array(twice.utf8) == Array(canonical.utf8) else {
        fail("encode ∘ decode is not a fixed point\n  first:  \(canonical)\n  second: \(twice)")
    }
}

/// See ``FuzzEntry``: SwiftPM's entry point for this executable, handed to libFuzzer's driver.
@_cdecl("FuzzEventLine_main")
public func fuzzEventLineMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzEntry.run(argc, argv, fuzzEventLine)
}
