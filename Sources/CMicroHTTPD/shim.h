#ifndef ONBOARD_CMICROHTTPD_SHIM_H
#define ONBOARD_CMICROHTTPD_SHIM_H
// libmicrohttpd's start, daemon-info and connection-info calls are variadic, which Swift cannot
// call. These wrappers fix the argument list; everything else is called directly from Swift.
// (A .c file in a system-library target is ignored, so the wrappers are `static inline`.)
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <pthread.h>
#include <microhttpd.h>

/// MHD's unescape step, made a no-op: the access handler then gets the path and query arguments
/// as sent (still percent-encoded), and the Swift side decodes them. Decoding before routing
/// would turn an encoded `/` (`%2F`) inside a path segment into a separator.
static inline size_t onboard_mhd_keep_escapes(void *cls, struct MHD_Connection *connection, char *text)
{
    (void)cls;
    (void)connection;
    return strlen(text);
}

/// Starts a daemon that owns no listening socket: the Swift acceptor accepts and hands each
/// connection over with MHD_add_connection, so it alone decides what happens when accept()
/// fails (libmicrohttpd busy-waits on EMFILE when it has no connection yet) and who is over a
/// limit. `thread_pool_size` polling threads each run their own epoll (poll where there is no
/// epoll) loop. Returns NULL when MHD cannot start (bad flags, no threads, no memory).
static inline struct MHD_Daemon *onboard_mhd_start_daemon(
    unsigned int flags,
    MHD_AccessHandlerCallback access_handler,
    void *access_handler_context,
    MHD_RequestCompletedCallback request_completed,
    void *request_completed_context,
    MHD_NotifyConnectionCallback connection_notified,
    void *connection_notified_context,
    unsigned int thread_pool_size,
    unsigned int connection_limit,
    size_t connection_memory_limit_bytes,
    unsigned int connection_timeout_seconds,
    void *tls_certificate_callback,
    const char *tls_priorities)
{
    if (tls_certificate_callback == NULL) {
        return MHD_start_daemon(
            flags, 0,
            NULL, NULL,
            access_handler, access_handler_context,
            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit_bytes,
            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
            MHD_OPTION_NOTIFY_COMPLETED, request_completed, request_completed_context,
            MHD_OPTION_NOTIFY_CONNECTION, connection_notified, connection_notified_context,
            MHD_OPTION_UNESCAPE_CALLBACK, onboard_mhd_keep_escapes, NULL,
            MHD_OPTION_END);
    }
    // HTTPS (flags hold MHD_USE_TLS): the certificate comes from the callback at each handshake,
    // so a reload needs no restart.
    return MHD_start_daemon(
        flags, 0,
        NULL, NULL,
        access_handler, access_handler_context,
        MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit_bytes,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
        MHD_OPTION_NOTIFY_COMPLETED, request_completed, request_completed_context,
        MHD_OPTION_NOTIFY_CONNECTION, connection_notified, connection_notified_context,
        MHD_OPTION_UNESCAPE_CALLBACK, onboard_mhd_keep_escapes, NULL,
        MHD_OPTION_HTTPS_CERT_CALLBACK, tls_certificate_callback,
        MHD_OPTION_HTTPS_PRIORITIES, tls_priorities,
        MHD_OPTION_END);
}

/// The socket of `connection`, or -1 if MHD cannot say.
static inline int onboard_mhd_connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

#ifdef __linux__
// accept4 is a GNU extension that the Glibc module does not declare without _GNU_SOURCE.
extern int accept4(int socket, struct sockaddr *address, socklen_t *length, int flags);

extern int pthread_setname_np(pthread_t thread, const char *name);

/// Names the calling thread (15 bytes at most), for `top -H` and debuggers.
static inline void onboard_name_thread(const char *name)
{
    (void)pthread_setname_np(pthread_self(), name);
}

/// accept(2) that returns the new socket already non-blocking and close-on-exec, atomically.
static inline int onboard_accept_nonblocking(int listener, struct sockaddr *address, socklen_t *length)
{
    return accept4(listener, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
#endif

/// The peer address of `connection`, or NULL if MHD cannot say. Valid while the connection lives.
static inline const struct sockaddr *onboard_mhd_client_address(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

#endif
