// Fuzzes what a sync server sends back, as the client reads it: the bytes of one HTTP answer
// through `HTTPTransport`'s parser (fed through a socket pair, as from a connection), then its
// body as a cursor, an upload answer's results and an error body (`SyncWire`), as `SyncClient`
// reads them. The server is untrusted here (docs/sync-protocol.md, "The client against a broken
// or hostile server").
//
// Properties: nothing traps or hangs; a parsed answer has a status of 100…599 and a body within
// the limit; a parsed cursor asks to forget only pseudonym literals and carries a signature only
// of the right length.
import FuzzEntry
import FuzzSupport
import Foundation
@_spi(Testing) import OnboardingStore

#if canImport(Glibc)
    import Glibc
#endif

private let target = "FuzzServerAnswer"
/// Smaller than the protocol's 8 MiB so inputs reach the limit: the largest input is 64 KiB.
private let limit = 4096

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServerAnswer(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    var pair: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { return 0 }
    // The inputs are at most 64 KiB, less than a socket pair's buffer: written whole at once.
    var size = Int32(256 << 10)
    setsockopt(pair[1], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    var sent = 0
    while sent < bytes.count {
        let written = bytes[sent...].withUnsafeBytes { send(pair[1], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if written <= 0 { break }
        sent += written
    }
    close(pair[1])
    defer { close(pair[0]) }
    let parsed = Result { () throws(TransportError) in
        try HTTPTransport.readAnswer(from: pair[0], timeout: .seconds(5), maximumAnswerBytes: limit)
    }
    guard case .success(let answer) = parsed else {
        if case .failure(let error) = parsed, error.message.contains("\n") {
            FuzzCheck.fail(target, "an error of more than one line: \(error.message.debugDescription)")
        }
        return 0
    }
    guard (100...599).contains(answer.status), answer.body.count <= limit else {
        FuzzCheck.fail(target, "parsed status \(answer.status) with \(answer.body.count) body bytes\n  input: \(FuzzCheck.hex(bytes))")
    }
    if let cursor = try? SyncWire.cursor(from: answer.body) {
        if let bad = cursor.forgetUsers.first(where: { !UserRef.isLiteral($0) }) {
            FuzzCheck.fail(target, "a cursor asks to forget \(bad.debugDescription), not a pseudonym literal")
        }
        if let signature = cursor.forgetSignature, signature.count != SignedHead.signatureByteCount {
            FuzzCheck.fail(target, "a forget signature of \(signature.count) bytes was read")
        }
        _ = cursor.forgetRequestsAreSigned(by: SigningPublicKey(bytes: [UInt8](repeating: 7, count: 32))!)
    }
    _ = try? SyncWire.outcomes(from: answer.body)
    _ = SyncWire.error(from: answer.body)
    _ = answer.retryAfterSeconds
    return 0
}

/// See ``FuzzEntry``: SwiftPM's entry point for this executable, handed to libFuzzer's driver.
@_cdecl("FuzzServerAnswer_main")
public func fuzzServerAnswerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzEntry.run(argc, argv, fuzzServerAnswer)
}
