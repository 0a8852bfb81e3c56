import Foundation
import HTTPServer
import Synchronization

/// What `GET /metrics` reports (docs/operations.md § Monitoring), in the Prometheus text
/// exposition format 0.0.4: counters and a latency histogram kept as requests are answered, and
/// gauges read when scraped. Every label value comes from a fixed set — a route's name, a method
/// the server knows, a status, an error code it sends — never from a path, a device, a user or a
/// token, so a client cannot add series.
final class ServerMetrics: Sendable {
    /// Upper bounds of the latency histogram, in seconds: a millisecond (a cursor read) to ten
    /// seconds (the longest a statement may run); a history poll that waits lands in +Inf.
    static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// The methods the protocol and the console use; any other is counted as `other`.
    static let knownMethods: Set<String> = ["GET", "POST", "DELETE", "PUT", "HEAD", "OPTIONS", "PATCH"]

    private struct RequestKey: Hashable, Comparable {
        let route: String
        let method: String
        let status: Int

        static func < (left: RequestKey, right: RequestKey) -> Bool {
            (left.route, left.method, left.status) < (right.route, right.method, right.status)
        }
    }

    private struct Latency {
        var buckets: [Int]
        var sum: Double = 0
        var count = 0

        init() { buckets = Array(repeating: 0, count: ServerMetrics.latencyBuckets.count) }
    }

    private struct State {
        var requests: [RequestKey: Int] = [:]
        var latency: [String: Latency] = [:]
        var errors: [String: Int] = [:]
        var eventsIngested = 0
        var bytesIngested = 0
    }

    private let state = Mutex(State())
    private let started = Date()

    /// One answered request: its route's name, method, status, error code (for status ≥ 400)
    /// and how long it took.
    func record(route: String, method: String, status: Int, errorCode: String?, seconds: Double) {
        let method = Self.knownMethods.contains(method) ? method : "other"
        state.withLock { state in
            state.requests[RequestKey(route: route, method: method, status: status), default: 0] += 1
            var latency = state.latency[route] ?? Latency()
            for (index, bound) in Self.latencyBuckets.enumerated() where seconds <= bound { latency.buckets[index] += 1 }
            latency.sum += seconds
            latency.count += 1
            state.latency[route] = latency
            if let errorCode { state.errors[errorCode, default: 0] += 1 }
        }
    }

    /// An upload stored `events` new records from a body of `bytes`.
    func ingested(events: Int, bytes: Int) {
        state.withLock { state in
            state.eventsIngested += events
            state.bytesIngested += bytes
        }
    }

    /// Point-in-time values read at the scrape.
    struct Gauges {
        var openConnections: Int?
        var connectionLimit: Int?
        var queuedRequests: Int?
        var openReplicas: Int?
        var databaseConnectionsOpen: Int?
        var databaseConnectionsInUse: Int?
        var databaseConnectionsMaximum: Int?
        var waitingPolls: Int
    }

    /// The whole exposition: `# HELP`, `# TYPE` and the samples of each family, families in a
    /// fixed order, samples sorted by their labels.
    func exposition(_ gauges: Gauges, version: String) -> String {
        let snapshot = state.withLock { $0 }
        var text = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples { text += "\(name)\(sample.labels) \(sample.value)\n" }
        }
        func labels(_ pairs: [(String, String)]) -> String {
            pairs.isEmpty ? "" : "{" + pairs.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        family("onboard_build_info", "gauge", "The onboard version serving (always 1).", [(labels([("version", version)]), "1")])
        family(
            "onboard_start_time_seconds", "gauge", "When this server started, in seconds since the epoch.",
            [("", Self.number(started.timeIntervalSince1970))])
        family(
            "onboard_http_requests_total", "counter", "Requests answered, by route, method and status.",
            snapshot.requests.sorted { $0.key < $1.key }.map { key, count in
                (labels([("route", key.route), ("method", key.method), ("status", String(key.status))]), String(count))
            })
        text += "# HELP onboard_http_request_duration_seconds Time from a request's arrival at the handler to its answer, by route.\n"
        text += "# TYPE onboard_http_request_duration_seconds histogram\n"
        for (route, latency) in snapshot.latency.sorted(by: { $0.key < $1.key }) {
            for (index, bound) in Self.latencyBuckets.enumerated() {
                text += "onboard_http_request_duration_seconds_bucket\(labels([("route", route), ("le", Self.number(bound))])) \(latency.buckets[index])\n"
            }
            text += "onboard_http_request_duration_seconds_bucket\(labels([("route", route), ("le", "+Inf")])) \(latency.count)\n"
            text += "onboard_http_request_duration_seconds_sum\(labels([("route", route)])) \(Self.number(latency.sum))\n"
            text += "onboard_http_request_duration_seconds_count\(labels([("route", route)])) \(latency.count)\n"
        }
        family(
            "onboard_errors_total", "counter", "Refusals and failures answered, by the error code of their body.",
            snapshot.errors.sorted { $0.key < $1.key }.map { (labels([("code", $0.key)]), String($0.value)) })
        family(
            "onboard_events_ingested_total", "counter", "Records uploads stored (resent duplicates not counted).",
            [("", String(snapshot.eventsIngested))])
        family("onboard_ingested_bytes_total", "counter", "Bytes of the upload bodies that were accepted.", [("", String(snapshot.bytesIngested))])
        family("onboard_history_polls_waiting", "gauge", "History polls (wait=) held now.", [("", String(gauges.waitingPolls))])
        if let open = gauges.openConnections {
            family("onboard_http_open_connections", "gauge", "Client connections open now.", [("", String(open))])
        }
        if let limit = gauges.connectionLimit {
            family("onboard_http_connection_limit", "gauge", "The connection limit in force.", [("", String(limit))])
        }
        if let queued = gauges.queuedRequests {
            family("onboard_http_queued_requests", "gauge", "Complete requests waiting for a handler thread.", [("", String(queued))])
        }
        if let replicas = gauges.openReplicas {
            family("onboard_open_replicas", "gauge", "Device replicas open now (LMDB storage).", [("", String(replicas))])
        }
        if let open = gauges.databaseConnectionsOpen, let used = gauges.databaseConnectionsInUse, let maximum = gauges.databaseConnectionsMaximum {
            family(
                "onboard_database_connections", "gauge", "PostgreSQL connections of this node's pool, by state.",
                [(labels([("state", "in_use")]), String(used)), (labels([("state", "idle")]), String(max(0, open - used)))])
            family("onboard_database_connections_maximum", "gauge", "The pool's size.", [("", String(maximum))])
        }
        return text
    }

    /// A label value as the format wants it: backslash, double quote and line feed escaped.
    static func escape(_ value: String) -> String {
        var escaped = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// A sample value: whole numbers without a fraction, others as Swift prints a Double.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
