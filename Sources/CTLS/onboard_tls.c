#include "onboard_tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

const char *const onboard_tls_priorities = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";

static void say(char *error, size_t capacity, const char *what, int code)
{
    if (error == NULL || capacity == 0) return;
    if (code == 0) snprintf(error, capacity, "%s", what);
    else snprintf(error, capacity, "%s (%s)", what, gnutls_strerror(code));
}

// MARK: Server credentials

enum { MAXIMUM_CHAIN = 16 };

struct onboard_tls_credentials {
    gnutls_pcert_st chain[MAXIMUM_CHAIN];
    unsigned int chain_length;
    gnutls_privkey_t key;
    int64_t expiry;
    uint8_t fingerprint[32];
};

void onboard_tls_credentials_free(onboard_tls_credentials *credentials)
{
    if (credentials == NULL) return;
    for (unsigned int index = 0; index < credentials->chain_length; index++) gnutls_pcert_deinit(&credentials->chain[index]);
    if (credentials->key != NULL) gnutls_privkey_deinit(credentials->key);
    free(credentials);
}

/// Whether `key` is the private half of `certificate`'s public key (their DER public keys agree).
static int key_matches(gnutls_privkey_t key, gnutls_pubkey_t certificate)
{
    gnutls_pubkey_t derived = NULL;
    gnutls_datum_t mine = {NULL, 0}, theirs = {NULL, 0};
    int same = 0;
    if (gnutls_pubkey_init(&derived) == 0 && gnutls_pubkey_import_privkey(derived, key, 0, 0) == 0
        && gnutls_pubkey_export2(derived, GNUTLS_X509_FMT_DER, &mine) == 0
        && gnutls_pubkey_export2(certificate, GNUTLS_X509_FMT_DER, &theirs) == 0) {
        same = mine.size == theirs.size && memcmp(mine.data, theirs.data, mine.size) == 0;
    }
    gnutls_free(mine.data);
    gnutls_free(theirs.data);
    if (derived != NULL) gnutls_pubkey_deinit(derived);
    return same;
}

onboard_tls_credentials *onboard_tls_credentials_load(const uint8_t *certificate, size_t certificate_length,
                                                      const uint8_t *key, size_t key_length,
                                                      char *error, size_t error_capacity)
{
    if (certificate_length > 16u << 20 || key_length > 1u << 20) {
        say(error, error_capacity, "the certificate or key file is larger than a PEM file can reasonably be", 0);
        return NULL;
    }
    onboard_tls_credentials *credentials = calloc(1, sizeof *credentials);
    if (credentials == NULL) {
        say(error, error_capacity, "out of memory", 0);
        return NULL;
    }
    gnutls_datum_t certificate_data = {(unsigned char *)certificate, (unsigned int)certificate_length};
    unsigned int count = MAXIMUM_CHAIN;
    int code = gnutls_pcert_list_import_x509_raw(credentials->chain, &count, &certificate_data, GNUTLS_X509_FMT_PEM,
                                                 GNUTLS_X509_CRT_LIST_FAIL_IF_UNSORTED);
    if (code < 0 || count == 0) {
        say(error, error_capacity, code == GNUTLS_E_SHORT_MEMORY_BUFFER
            ? "the certificate file holds more than 16 certificates"
            : "the certificate file holds no usable PEM certificate chain (the server's certificate first, then its issuers)", code < 0 ? code : 0);
        free(credentials);
        return NULL;
    }
    credentials->chain_length = count;
    gnutls_datum_t key_data = {(unsigned char *)key, (unsigned int)key_length};
    code = gnutls_privkey_init(&credentials->key);
    if (code == 0) code = gnutls_privkey_import_x509_raw(credentials->key, &key_data, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (code < 0) {
        say(error, error_capacity, "the key file holds no usable unencrypted PEM private key", code);
        onboard_tls_credentials_free(credentials);
        return NULL;
    }
    if (!key_matches(credentials->key, credentials->chain[0].pubkey)) {
        say(error, error_capacity, "the private key does not belong to the certificate (the first one of the certificate file)", 0);
        onboard_tls_credentials_free(credentials);
        return NULL;
    }
    gnutls_x509_crt_t parsed = NULL;
    code = gnutls_x509_crt_init(&parsed);
    if (code == 0) code = gnutls_x509_crt_import(parsed, &credentials->chain[0].cert, GNUTLS_X509_FMT_DER);
    size_t size = sizeof credentials->fingerprint;
    if (code == 0) code = gnutls_x509_crt_get_fingerprint(parsed, GNUTLS_DIG_SHA256, credentials->fingerprint, &size);
    if (code == 0) credentials->expiry = (int64_t)gnutls_x509_crt_get_expiration_time(parsed);
    if (parsed != NULL) gnutls_x509_crt_deinit(parsed);
    if (code < 0) {
        say(error, error_capacity, "the certificate cannot be read", code);
        onboard_tls_credentials_free(credentials);
        return NULL;
    }
    return credentials;
}

int64_t onboard_tls_credentials_expiry(const onboard_tls_credentials *credentials) { return credentials->expiry; }

void onboard_tls_credentials_fingerprint(const onboard_tls_credentials *credentials, uint8_t fingerprint[32])
{
    memcpy(fingerprint, credentials->fingerprint, 32);
}

// MARK: Server registry

enum { MAXIMUM_PORTS = 64 };

/// The credentials of one listening port: the current ones, and those replaced by a reload,
/// kept because a handshake under way may still hold them (GnuTLS does not copy them).
struct port_slot {
    uint16_t port;
    int used;
    onboard_tls_credentials *current;
    onboard_tls_credentials **retired;
    size_t retired_count;
};

static struct port_slot slots[MAXIMUM_PORTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

static struct port_slot *slot_of(uint16_t port)
{
    for (size_t index = 0; index < MAXIMUM_PORTS; index++) {
        if (slots[index].used && slots[index].port == port) return &slots[index];
    }
    return NULL;
}

int onboard_tls_serve(uint16_t port, onboard_tls_credentials *credentials)
{
    pthread_mutex_lock(&slots_lock);
    struct port_slot *slot = slot_of(port);
    if (slot == NULL) {
        for (size_t index = 0; index < MAXIMUM_PORTS && slot == NULL; index++) {
            if (!slots[index].used) slot = &slots[index];
        }
        if (slot == NULL) {
            pthread_mutex_unlock(&slots_lock);
            return -1;
        }
        memset(slot, 0, sizeof *slot);
        slot->used = 1;
        slot->port = port;
    }
    if (slot->current != NULL) {
        onboard_tls_credentials **grown = realloc(slot->retired, (slot->retired_count + 1) * sizeof *grown);
        if (grown == NULL) {
            pthread_mutex_unlock(&slots_lock);
            return -1;
        }
        slot->retired = grown;
        slot->retired[slot->retired_count++] = slot->current;
    }
    slot->current = credentials;
    pthread_mutex_unlock(&slots_lock);
    return 0;
}

void onboard_tls_release(uint16_t port)
{
    pthread_mutex_lock(&slots_lock);
    struct port_slot *slot = slot_of(port);
    if (slot != NULL) {
        onboard_tls_credentials_free(slot->current);
        for (size_t index = 0; index < slot->retired_count; index++) onboard_tls_credentials_free(slot->retired[index]);
        free(slot->retired);
        memset(slot, 0, sizeof *slot);
    }
    pthread_mutex_unlock(&slots_lock);
}

static int retrieve_certificate(gnutls_session_t session, const gnutls_datum_t *requested_issuers, int issuer_count,
                                const gnutls_pk_algorithm_t *algorithms, int algorithm_count,
                                gnutls_pcert_st **chain, unsigned int *chain_length, gnutls_privkey_t *key)
{
    (void)requested_issuers;
    (void)issuer_count;
    (void)algorithms;
    (void)algorithm_count;
    // libmicrohttpd gives GnuTLS the connection's socket; its local port names the server.
    int socket = gnutls_transport_get_int(session);
    struct sockaddr_storage address;
    socklen_t length = sizeof address;
    if (socket < 0 || getsockname(socket, (struct sockaddr *)&address, &length) != 0) return -1;
    uint16_t port;
    if (address.ss_family == AF_INET) port = ntohs(((struct sockaddr_in *)&address)->sin_port);
    else if (address.ss_family == AF_INET6) port = ntohs(((struct sockaddr_in6 *)&address)->sin6_port);
    else return -1;
    pthread_mutex_lock(&slots_lock);
    struct port_slot *slot = slot_of(port);
    int found = slot != NULL && slot->current != NULL;
    if (found) {
        *chain = slot->current->chain;
        *chain_length = slot->current->chain_length;
        *key = slot->current->key;
    }
    pthread_mutex_unlock(&slots_lock);
    return found ? 0 : -1;
}

void *onboard_tls_certificate_callback(void) { return (void *)&retrieve_certificate; }

// MARK: Client

struct onboard_tls_client {
    gnutls_session_t session;
    gnutls_certificate_credentials_t credentials;
    int last_code;
    char message[512];
};

onboard_tls_client *onboard_tls_client_new(int fd, const char *host, const char *ca_file, char *error, size_t error_capacity)
{
    onboard_tls_client *client = calloc(1, sizeof *client);
    if (client == NULL) {
        say(error, error_capacity, "out of memory", 0);
        return NULL;
    }
    int code = gnutls_certificate_allocate_credentials(&client->credentials);
    if (code < 0) {
        say(error, error_capacity, "cannot set up TLS", code);
        free(client);
        return NULL;
    }
    int loaded = ca_file != NULL ? gnutls_certificate_set_x509_trust_file(client->credentials, ca_file, GNUTLS_X509_FMT_PEM)
                                 : gnutls_certificate_set_x509_system_trust(client->credentials);
    if (loaded <= 0) {
        say(error, error_capacity, ca_file != NULL ? "the CA file holds no usable PEM certificate" : "the system has no trusted CA certificates",
            loaded < 0 ? loaded : 0);
        gnutls_certificate_free_credentials(client->credentials);
        free(client);
        return NULL;
    }
    code = gnutls_init(&client->session, GNUTLS_CLIENT | GNUTLS_NONBLOCK);
    if (code == 0) code = gnutls_priority_set_direct(client->session, onboard_tls_priorities, NULL);
    if (code == 0) code = gnutls_credentials_set(client->session, GNUTLS_CRD_CERTIFICATE, client->credentials);
    if (code < 0) {
        say(error, error_capacity, "cannot set up TLS", code);
        if (client->session != NULL) gnutls_deinit(client->session);
        gnutls_certificate_free_credentials(client->credentials);
        free(client);
        return NULL;
    }
    // SNI names a host, never an address (RFC 6066 § 3).
    struct in6_addr ignored;
    int is_address = inet_pton(AF_INET, host, &ignored) == 1 || inet_pton(AF_INET6, host, &ignored) == 1;
    if (!is_address) gnutls_server_name_set(client->session, GNUTLS_NAME_DNS, host, strlen(host));
    // Verified in the handshake: the chain against the CAs, and the name (or address) against
    // the certificate.
    gnutls_session_set_verify_cert(client->session, host, 0);
    gnutls_transport_set_int(client->session, fd);
    return client;
}

static int want(onboard_tls_client *client, int code)
{
    if (code == GNUTLS_E_AGAIN || code == GNUTLS_E_INTERRUPTED) {
        return gnutls_record_get_direction(client->session) == 0 ? ONBOARD_TLS_WANT_READ : ONBOARD_TLS_WANT_WRITE;
    }
    client->last_code = code;
    return code;
}

int onboard_tls_client_handshake(onboard_tls_client *client)
{
    int code = gnutls_handshake(client->session);
    return code == 0 ? 0 : want(client, code);
}

ssize_t onboard_tls_client_send(onboard_tls_client *client, const void *bytes, size_t length)
{
    ssize_t sent = gnutls_record_send(client->session, bytes, length);
    return sent >= 0 ? sent : want(client, (int)sent);
}

ssize_t onboard_tls_client_recv(onboard_tls_client *client, void *bytes, size_t length)
{
    ssize_t received = gnutls_record_recv(client->session, bytes, length);
    // A server that closes without close_notify ends the stream as a plain close would: the
    // answer's own framing (Content-Length, chunks) tells a cut answer from a whole one.
    if (received == GNUTLS_E_PREMATURE_TERMINATION) return 0;
    return received >= 0 ? received : want(client, (int)received);
}

size_t onboard_tls_client_pending(onboard_tls_client *client) { return gnutls_record_check_pending(client->session); }

const char *onboard_tls_client_error(onboard_tls_client *client)
{
    if (client->last_code == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
        unsigned int status = gnutls_session_get_verify_cert_status(client->session);
        gnutls_datum_t text = {NULL, 0};
        if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text, 0) == 0) {
            snprintf(client->message, sizeof client->message, "the server's certificate is not trusted: %s", (const char *)text.data);
            gnutls_free(text.data);
            return client->message;
        }
    }
    snprintf(client->message, sizeof client->message, "%s", gnutls_strerror(client->last_code));
    return client->message;
}

int onboard_tls_client_verification_failed(onboard_tls_client *client)
{
    return client->last_code == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR;
}

const char *onboard_tls_client_protocol(onboard_tls_client *client)
{
    const char *name = gnutls_protocol_get_name(gnutls_protocol_get_version(client->session));
    return name != NULL ? name : "unknown";
}

void onboard_tls_client_free(onboard_tls_client *client)
{
    if (client == NULL) return;
    (void)gnutls_bye(client->session, GNUTLS_SHUT_WR); // non-blocking: tried once, never waited for
    gnutls_deinit(client->session);
    gnutls_certificate_free_credentials(client->credentials);
    free(client);
}
