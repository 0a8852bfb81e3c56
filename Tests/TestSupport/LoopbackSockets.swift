import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// TCP sockets of this machine as the kernel lists them (`/proc/net/tcp`), for leak checks that
/// other tests running in the same process cannot disturb: a count of descriptors moves with
/// every pipe and socket any test opens; the sockets bound to one server's port do not.
public enum LoopbackSockets {
    /// A loopback port nothing listens on now: bound to 127.0.0.1:0, then closed.
    public static func freePort() throws -> UInt16 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ChildProcessError("socket() failed: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw ChildProcessError("bind() failed: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Sockets whose local port is `port` and that are neither listening nor in TIME_WAIT: the
    /// connections a server on `port` still holds open (a leaked one sits in CLOSE_WAIT).
    public static func openServerSide(port: UInt16) -> Int {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .ascii) else { return -1 }
        let listening = "0A", timeWait = "06"
        var count = 0
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 3, let colon = fields[1].lastIndex(of: ":"),
                let local = UInt16(fields[1][fields[1].index(after: colon)...], radix: 16), local == port
            else { continue }
            let state = String(fields[3])
            if state != listening && state != timeWait { count += 1 }
        }
        return count
    }
}
