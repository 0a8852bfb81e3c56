import Foundation
@testable import OnboardingServer
import Testing

/// `onboard serve --trusted-proxy`: which address a request counts against in the rate limits.
/// Only a trusted proxy's `X-Forwarded-For` is read, from the right, and a garbled entry never
/// lends a request another address.
@Suite struct TrustedProxyTests {
    static let proxies: Set<String> = ["127.0.0.1", "10.0.0.2"]

    static func address(_ peer: String, _ header: String?) -> String? {
        SyncHTTPHandler.clientAddress(peer: peer, forwardedFor: header, trusting: proxies)
    }

    @Test func theRightmostUntrustedHopIsTheClient() {
        #expect(Self.address("127.0.0.1", "203.0.113.7") == "203.0.113.7")
        // What the client wrote itself is to the left of what the proxy appended.
        #expect(Self.address("127.0.0.1", "198.51.100.66, 203.0.113.7") == "203.0.113.7")
        // Through two trusted proxies.
        #expect(Self.address("127.0.0.1", "203.0.113.7, 10.0.0.2") == "203.0.113.7")
        #expect(Self.address("127.0.0.1", "2001:db8::1") == "2001:db8::1")
        // Anyone but a trusted proxy: its own address, whatever it says.
        #expect(Self.address("192.0.2.50", "203.0.113.7") == "192.0.2.50")
        #expect(SyncHTTPHandler.clientAddress(peer: "127.0.0.1", forwardedFor: "203.0.113.7", trusting: []) == "127.0.0.1")
        #expect(Self.address("127.0.0.1", nil) == "127.0.0.1")
    }

    @Test func hostileHeadersNeverLendAnotherAddress() {
        let hostile = [
            "", ",", " , ", "unknown", "203.0.113.7\u{0}", "203.0.113.7\r\nX-Evil: 1", "\u{1b}[2J", "999.1.1.1", "203.0.113.7:443",
            "[2001:db8::1]", String(repeating: "9", count: 100_000), "-1", "18446744073709551615", "0x7f000001"
        ]
        for header in hostile {
            #expect(Self.address("127.0.0.1", header) == "127.0.0.1", "\(header.prefix(40).debugDescription)")
            // A garbled entry right of a good one stops the walk there.
            #expect(Self.address("127.0.0.1", "203.0.113.7, " + header) == "127.0.0.1", "\(header.prefix(40).debugDescription)")
        }
        // Ten thousand entries: the walk stops at the first untrusted one.
        let long = Array(repeating: "198.51.100.1", count: 10_000).joined(separator: ",") + ",203.0.113.9"
        #expect(Self.address("127.0.0.1", long) == "203.0.113.9")
    }

    @Test func theOptionTakesAddressesOnly() throws {
        #expect(try TrustedProxies.parse("127.0.0.1").get() == ["127.0.0.1"])
        #expect(try TrustedProxies.parse("127.0.0.1, 10.0.0.2,::1").get() == ["127.0.0.1", "10.0.0.2", "::1"])
        for bad in ["", "localhost", "127.0.0.1,", "10.0.0.0/8", "127.0.0.1\u{7}", "256.0.0.1", "*"] {
            guard case .failure = TrustedProxies.parse(bad) else {
                Issue.record("\(bad.debugDescription) was taken")
                continue
            }
        }
        #expect(TrustedProxies.ipv4("127.0.0.1") == inet_addr("127.0.0.1"))
        #expect(TrustedProxies.ipv4("::1") == nil)
    }
}
