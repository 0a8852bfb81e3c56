import Testing
@testable import OnboardingModel

@Suite("Digest: BLAKE2b-256")
struct DigestTests {
    @Test(
        "hashes match published BLAKE2b-256 values",
        arguments: [
            ("", "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"),
            ("abc", "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319"),
            ("The quick brown fox jumps over the lazy dog", "01718cec35cd3d796dd00020e0bfecb473ad23457d063b75eff29c0ffa2e58a9")
        ])
    func knownVectors(input: String, expected: String) {
        #expect(Digest.hash(Array(input.utf8)).hex == expected)
        #expect(Digest.hash(Array(input.utf8)).description == expected)
    }

    @Test("a 1 KiB input hashes the same through both entry points")
    func longInput() {
        let input = (0..<4).flatMap { _ in (0...255).map { UInt8($0) } }
        let expected = "f1551feeb252c7e60bb362205bd1ac2f70b145260a91d41e8c5d0a187549a5f2"
        #expect(Digest.hash(input).hex == expected)
        #expect(input.withUnsafeBytes { Digest.hash($0) }.hex == expected)
    }

    @Test("zero is 32 zero bytes; hex parses both cases and refuses anything else")
    func hexRoundTrip() {
        #expect(Digest.zero.bytes == [UInt8](repeating: 0, count: 32))
        #expect(Digest.zero.hex == String(repeating: "0", count: 64))
        let digest = Digest.hash(Array("abc".utf8))
        #expect(Digest(hex: digest.hex) == digest)
        #expect(Digest(hex: digest.hex.uppercased()) == digest)
        #expect(Digest(hex: String(digest.hex.dropLast())) == nil)
        #expect(Digest(hex: digest.hex + "0") == nil)
        #expect(Digest(hex: digest.hex + "00") == nil)
        #expect(Digest(hex: "g" + digest.hex.dropFirst()) == nil)
        #expect(Digest(hex: "") == nil)
        #expect(Digest(hex: String(repeating: "é", count: 32)) == nil)
        #expect(Digest(bytes: Array(0..<32)).hex == "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
    }
}
