import Foundation
import HTTPServer
import OnboardingStore

extension SyncServer {
    /// Tells the server which HTTP server serves it, so `GET /metrics` reports its open
    /// connections, connection limit and queued requests (held weakly).
    public func observe(_ http: HTTPServer) {
        let gauges: @Sendable () -> (openConnections: Int, queuedRequests: Int, connectionLimit: Int)? = { [weak http] in
            guard let http else { return nil }
            let load = http.load
            return (load.openConnections, load.queuedRequests, http.connectionLimit)
        }
        httpGauges.withLock { $0 = gauges }
    }

    /// `GET /metrics` (admin token): the Prometheus text exposition format 0.0.4.
    func metricsResponse() -> SyncResponse {
        let http = httpGauges.withLock { $0 }?()
        let replicas = replicaStorage?.openReplicaCount
        let pool = (storage as? PostgresStorage)?.pool
        let gauges = ServerMetrics.Gauges(
            openConnections: http?.openConnections, connectionLimit: http?.connectionLimit,
            queuedRequests: http?.queuedRequests, openReplicas: replicas,
            databaseConnectionsOpen: pool?.openConnections, databaseConnectionsInUse: pool?.connectionsInUse,
            databaseConnectionsMaximum: pool?.options.maximumConnections, waitingPolls: polls.count)
        return SyncResponse(
            status: 200, headers: ["content-type": "text/plain; version=0.0.4; charset=utf-8"],
            body: Array(metrics.exposition(gauges, version: options.productVersion).utf8))
    }

    /// A route's name in the metrics: fixed per endpoint, never holding the path's device or user.
    static func metricsName(of route: Route) -> String {
        switch route {
        case .health: "health"
        case .enrol: "enrol"
        case .issueAuditorToken: "issue_auditor_token"
        case .audit: "audit"
        case .notFound: "not_found"
        case .consoleRedirect, .console: "console"
        case .wrongMethod: "wrong_method"
        case .issueDeviceToken: "issue_device_token"
        case .revokeDeviceTokens: "revoke_device_tokens"
        case .cursor: "cursor"
        case .upload: "upload"
        case .history: "user_history"
        case .lockout: "lockout"
        case .deviceHistory: "device_history"
        case .forgetUser: "forget_user"
        case .users: "users"
        case .devices: "devices"
        case .actions: "actions"
        case .token: "token"
        case .rotateToken: "rotate_token"
        case .revokeAuditorTokens: "revoke_auditor_tokens"
        case .policy: "policy"
        case .metrics: "metrics"
        case .deviceAudit: "device_audit"
        case .revokeDeviceToken: "revoke_device_token"
        case .clearLockout: "clear_lockout"
        case .userCounts: "user_counts"
        case .deviceCounts: "device_counts"
        case .userExport: "user_export"
        case .deviceExport: "device_export"
        }
    }
}
