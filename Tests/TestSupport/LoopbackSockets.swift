import Foundation

/// TCP sockets of this machine as the kernel lists them (`/proc/net/tcp`), for leak checks that
/// other tests running in the same process cannot disturb: a count of descriptors moves with
/// every pipe and socket any test opens; the sockets bound to one server's port do not.
public enum LoopbackSockets {
    /// Sockets whose local port is `port` and that are neither listening nor in TIME_WAIT: the
    /// connections a server on `port` still holds open (a leaked one sits in CLOSE_WAIT).
    public static func openServerSide(port: UInt16) -> Int {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .ascii) else { return -1 }
        let listening = "0A", timeWait = "06"
        var count = 0
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 3, let colon = fields[1].lastIndex(of: ":"),
                  let local = UInt16(fields[1][fields[1].index(after: colon)...], radix: 16), local == port else { continue }
            let state = String(fields[3])
            if state != listening && state != timeWait { count += 1 }
        }
        return count
    }
}
