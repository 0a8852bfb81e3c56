#ifndef ONBOARD_CMICROHTTPD_SHIM_H
#define ONBOARD_CMICROHTTPD_SHIM_H
// libmicrohttpd's start, daemon-info and connection-info calls are variadic, which Swift cannot
// call. These wrappers fix the argument list; everything else is called directly from Swift.
// (A .c file in a system-library target is ignored, so the wrappers are `static inline`.)
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
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

/// Starts a daemon bound to `address` (the `port` argument is then ignored by MHD but kept for
/// its error messages). Returns NULL when MHD cannot start (port in use, bad flags, no threads).
static inline struct MHD_Daemon *onboard_mhd_start_daemon(
    unsigned int flags,
    uint16_t port,
    const struct sockaddr *address,
    MHD_AccessHandlerCallback access_handler,
    void *access_handler_context,
    MHD_RequestCompletedCallback request_completed,
    void *request_completed_context,
    unsigned int connection_limit,
    size_t connection_memory_limit_bytes,
    unsigned int connection_timeout_seconds)
{
    return MHD_start_daemon(
        flags, port,
        NULL, NULL,
        access_handler, access_handler_context,
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit_bytes,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
        MHD_OPTION_NOTIFY_COMPLETED, request_completed, request_completed_context,
        MHD_OPTION_UNESCAPE_CALLBACK, onboard_mhd_keep_escapes, NULL,
        MHD_OPTION_END);
}

/// The port the daemon actually listens on (useful after binding port 0), or 0 if MHD cannot say.
static inline uint16_t onboard_mhd_bound_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// The peer address of `connection`, or NULL if MHD cannot say. Valid while the connection lives.
static inline const struct sockaddr *onboard_mhd_client_address(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

#endif
