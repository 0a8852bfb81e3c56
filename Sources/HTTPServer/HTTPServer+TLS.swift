import CTLS
import Foundation

/// HTTPS for ``HTTPServer``: a certificate chain and key in PEM files, TLS 1.2 or 1.3 only,
/// reloaded from the same files by ``HTTPServer/reloadCertificate()`` without dropping a
/// connection (handshakes from then on get the new certificate; connections already open keep
/// theirs).
///
/// ```swift
/// let server = HTTPServer(port: 8443, handler: handler, tls: .init(certificateFile: "cert.pem", keyFile: "key.pem"))
/// try server.start()
/// try server.reloadCertificate()   // on SIGHUP, after the files were renewed
/// ```
public struct TLSConfiguration: Sendable, Equatable {
    /// The server's certificate first, then the intermediates a client needs (PEM).
    public var certificateFile: String
    /// Its private key, unencrypted (PEM).
    public var keyFile: String

    public init(certificateFile: String, keyFile: String) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }

    /// 1 MiB per file: a chain of sixteen certificates is a few tens of KiB.
    static let maximumFileBytes = 1 << 20
}

/// What the server presents: the SHA-256 fingerprint of its certificate and when it expires.
public struct TLSCertificateInfo: Sendable, Equatable {
    public let fingerprint: [UInt8]
    public let expiresAt: Date

    /// The fingerprint as `openssl x509 -fingerprint -sha256` prints it (`AB:CD:…`).
    public var fingerprintText: String { fingerprint.map { String(format: "%02X", $0) }.joined(separator: ":") }
}

/// A parsed chain and key, until the server's registry takes them (``install(port:)``).
final class TLSCredentials {
    private var pointer: OpaquePointer?
    let info: TLSCertificateInfo

    /// Reads and checks both files; the error names the file and what is wrong with it.
    init(_ configuration: TLSConfiguration) throws(HTTPServerError) {
        let certificate = try Self.read(configuration.certificateFile, what: "certificate")
        let key = try Self.read(configuration.keyFile, what: "key")
        var error = [CChar](repeating: 0, count: 512)
        let loaded = certificate.withUnsafeBufferPointer { certificateBytes in
            key.withUnsafeBufferPointer { keyBytes in
                onboard_tls_credentials_load(
                    certificateBytes.baseAddress, certificateBytes.count, keyBytes.baseAddress, keyBytes.count,
                    &error, error.count)
            }
        }
        guard let loaded else {
            let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw HTTPServerError(.invalidTLS, "TLS: \(configuration.certificateFile) and \(configuration.keyFile): \(reason)")
        }
        var fingerprint = [UInt8](repeating: 0, count: 32)
        onboard_tls_credentials_fingerprint(loaded, &fingerprint)
        let expiry = Date(timeIntervalSince1970: TimeInterval(onboard_tls_credentials_expiry(loaded)))
        guard expiry > Date() else {
            onboard_tls_credentials_free(loaded)
            throw HTTPServerError(
                .invalidTLS, "TLS: the certificate in \(configuration.certificateFile) expired at \(ISO8601DateFormatter().string(from: expiry)); renew it")
        }
        pointer = loaded
        info = TLSCertificateInfo(fingerprint: fingerprint, expiresAt: expiry)
    }

    deinit {
        if let pointer { onboard_tls_credentials_free(pointer) }
    }

    /// Hands the credentials to the handshakes on `port`; they belong to the registry from now on.
    func install(port: UInt16) throws(HTTPServerError) {
        guard let pointer else { return }
        guard onboard_tls_serve(port, pointer) == 0 else {
            throw HTTPServerError(.invalidTLS, "TLS: more than 64 HTTPS servers in one process")
        }
        self.pointer = nil
    }

    private static func read(_ path: String, what: String) throws(HTTPServerError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw HTTPServerError(.invalidTLS, "TLS: cannot read the \(what) file \(path) (missing, or not readable by this user)")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: TLSConfiguration.maximumFileBytes + 1)) ?? Data()
        guard data.count <= TLSConfiguration.maximumFileBytes else {
            throw HTTPServerError(.invalidTLS, "TLS: the \(what) file \(path) is larger than 1 MiB; it is not a PEM \(what)")
        }
        return [UInt8](data)
    }
}

extension HTTPServer {
    /// Reads the certificate and key files again and presents them from the next handshake on;
    /// connections already open are untouched. On any error the certificate in use stays.
    @discardableResult
    public func reloadCertificate() throws(HTTPServerError) -> TLSCertificateInfo {
        guard let tls else { throw HTTPServerError(.invalidTLS, "TLS: this server serves plain HTTP; there is no certificate to reload") }
        guard isRunning else { throw HTTPServerError(.invalidTLS, "TLS: the server is not running") }
        let credentials = try TLSCredentials(tls)
        try credentials.install(port: port)
        certificateInfo.withLock { $0 = credentials.info }
        return credentials.info
    }

    /// Reads and checks a certificate and key as ``start()`` would, serving nothing
    /// (`onboard serve --check-config`).
    public static func checkCertificate(_ configuration: TLSConfiguration) throws(HTTPServerError) -> TLSCertificateInfo {
        try TLSCredentials(configuration).info
    }

    /// The certificate presented now (nil for plain HTTP, or before ``start()``).
    public var certificate: TLSCertificateInfo? { certificateInfo.withLock { $0 } }
}
