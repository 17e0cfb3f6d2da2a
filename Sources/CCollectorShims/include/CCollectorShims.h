#ifndef SERVERTRUST_COLLECTOR_SHIMS_H
#define SERVERTRUST_COLLECTOR_SHIMS_H
// Wrappers for the collector's C libraries where Swift cannot call them directly:
// libmicrohttpd's variadic MHD_start_daemon, MHD_get_connection_info and MHD_get_daemon_info,
// and SQLite's SQLITE_TRANSIENT destructor (a macro casting -1 to a function pointer).
// No logic beyond building the option list lives here.
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <sqlite3.h>

/// The limits and identity of one libmicrohttpd daemon.
typedef struct {
    /// An IPv4 or IPv6 literal to bind (inet_pton's forms).
    const char *address;
    /// The port; 0 lets the kernel pick one (read it back with CCollectorShims_bound_port).
    uint16_t port;
    /// Connections served at once (MHD_OPTION_CONNECTION_LIMIT).
    unsigned int connection_limit;
    /// Connections one client address may hold (MHD_OPTION_PER_IP_CONNECTION_LIMIT; 0: no limit).
    unsigned int per_address_connection_limit;
    /// Seconds a connection may sit idle (MHD_OPTION_CONNECTION_TIMEOUT).
    unsigned int connection_timeout;
    /// Bytes of each connection's memory pool: the request line and headers must fit in it
    /// (MHD_OPTION_CONNECTION_MEMORY_LIMIT).
    size_t connection_memory_limit;
    /// PEM certificate chain and key for HTTPS (MHD_USE_TLS, GnuTLS); both NULL for plain HTTP.
    const char *tls_certificate_pem;
    const char *tls_key_pem;
} CCollectorShims_ServerSettings;

/// MHD_start_daemon with one thread per connection, an internal listening thread, an
/// inter-thread channel (so MHD_quiesce_daemon works), poll() rather than select(), strict
/// request parsing (MHD_OPTION_STRICT_FOR_CLIENT = 1) and the settings above. NULL when the
/// address does not parse or the daemon does not start (errno set by libmicrohttpd).
struct MHD_Daemon *CCollectorShims_start_daemon(
    const CCollectorShims_ServerSettings *settings, MHD_AccessHandlerCallback handler, void *handler_context,
    MHD_RequestCompletedCallback completed, void *completed_context);

/// The port the daemon listens on (MHD_DAEMON_INFO_BIND_PORT), 0 if unknown.
uint16_t CCollectorShims_bound_port(struct MHD_Daemon *daemon);

/// The connection's peer address as text (inet_ntop) into `buffer`; 0 on success, -1 otherwise.
int CCollectorShims_client_address(struct MHD_Connection *connection, char *buffer, size_t length);

/// sqlite3_bind_text with SQLITE_TRANSIENT (SQLite copies the bytes before returning).
int CCollectorShims_sqlite3_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int length);

#endif
