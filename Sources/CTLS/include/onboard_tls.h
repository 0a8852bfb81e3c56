#ifndef ONBOARD_TLS_H
#define ONBOARD_TLS_H
// TLS for the sync server (libmicrohttpd's HTTPS, through GnuTLS as Debian builds it) and the
// sync client, in C because GnuTLS's callbacks and variadic calls are C's. Everything that
// decides anything (which files, when to reload, what to tell the user) stays in Swift.
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/// TLS 1.2 and 1.3 only, GnuTLS's NORMAL ciphers otherwise (both sides).
extern const char *const onboard_tls_priorities;

// MARK: Server

/// A certificate chain and its private key, parsed and checked to belong together.
typedef struct onboard_tls_credentials onboard_tls_credentials;

/// Parses PEM `certificate` (the server's certificate first, then any intermediates) and PEM
/// `key`; NULL, with a one-line reason in `error`, when either cannot be used.
onboard_tls_credentials *onboard_tls_credentials_load(const uint8_t *certificate, size_t certificate_length,
                                                      const uint8_t *key, size_t key_length,
                                                      char *error, size_t error_capacity);

/// The server certificate's expiry (seconds since the epoch), its SHA-256 fingerprint (32 bytes
/// into `fingerprint`).
int64_t onboard_tls_credentials_expiry(const onboard_tls_credentials *credentials);
void onboard_tls_credentials_fingerprint(const onboard_tls_credentials *credentials, uint8_t fingerprint[32]);

void onboard_tls_credentials_free(onboard_tls_credentials *credentials);

/// Makes `credentials` the ones handshakes on local port `port` get from now on (the registry
/// owns them; the ones they replace stay alive, for handshakes under way, until the port is
/// released). Returns 0, or -1 when the registry is full.
int onboard_tls_serve(uint16_t port, onboard_tls_credentials *credentials);

/// Frees every credential registered for `port` (after its daemon stopped).
void onboard_tls_release(uint16_t port);

/// The callback for MHD_OPTION_HTTPS_CERT_CALLBACK: the credentials registered for the local
/// port of the session's socket. (Its type is GnuTLS's `gnutls_certificate_retrieve_function2`;
/// void * here, so Swift need not see GnuTLS's headers.)
void *onboard_tls_certificate_callback(void);

// MARK: Client

typedef struct onboard_tls_client onboard_tls_client;

/// What a call on a non-blocking socket needs before it can go on.
enum {
    ONBOARD_TLS_WANT_READ = -1001,
    ONBOARD_TLS_WANT_WRITE = -1002,
};

/// A client session on the connected non-blocking socket `fd`, verifying the server as `host`
/// (a DNS name, also sent as SNI, or an IP address matched against the certificate's IP
/// addresses) against the CAs of `ca_file` (PEM), or the system's when NULL. NULL, with the
/// reason in `error`, on failure.
onboard_tls_client *onboard_tls_client_new(int fd, const char *host, const char *ca_file, char *error, size_t error_capacity);

/// Runs the handshake on: 0 when done, ONBOARD_TLS_WANT_READ/WRITE, or another negative value
/// (then onboard_tls_client_error tells why, verification failures included).
int onboard_tls_client_handshake(onboard_tls_client *client);

/// As send(2) and recv(2): bytes done, 0 at the end of the stream (recv), or
/// ONBOARD_TLS_WANT_READ/WRITE, or another negative value.
ssize_t onboard_tls_client_send(onboard_tls_client *client, const void *bytes, size_t length);
ssize_t onboard_tls_client_recv(onboard_tls_client *client, void *bytes, size_t length);

/// Bytes already decrypted and waiting: read them before polling the socket.
size_t onboard_tls_client_pending(onboard_tls_client *client);

/// The last failure in words, certificate problems spelt out (valid until the next call).
const char *onboard_tls_client_error(onboard_tls_client *client);

/// Whether the last failure was the server's certificate failing verification (not worth a retry).
int onboard_tls_client_verification_failed(onboard_tls_client *client);

/// The negotiated protocol ("TLS1.3").
const char *onboard_tls_client_protocol(onboard_tls_client *client);

/// Ends the session (a close_notify is tried, never waited for) and frees it; the socket stays open.
void onboard_tls_client_free(onboard_tls_client *client);

#endif
