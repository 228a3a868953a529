// Swift cannot call C variadic functions, and libmicrohttpd's start, daemon-info and
// connection-info calls are variadic: these inline wrappers give them fixed signatures.
#ifndef HERALD_CMICROHTTPD_SHIM_H
#define HERALD_CMICROHTTPD_SHIM_H

#include <errno.h>
#include <linux/memfd.h>
#include <unistd.h>
// glibc declares memfd_create only under _GNU_SOURCE, and defining that here would give this module
// another view of the system headers than Dispatch's, which clang refuses in a clean build. This is
// glibc's own signature (since 2.27).
int memfd_create(const char *name, unsigned int flags);
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

typedef void *(*herald_uri_log_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

/// Starts a daemon on `host` (an IPv4 or IPv6 literal) and `port` (0 = any free port).
/// Returns NULL when the host is not a literal address or the daemon cannot start.
static inline struct MHD_Daemon *herald_mhd_start(
    unsigned int flags, const char *host, uint16_t port,
    unsigned int thread_pool_size, unsigned int connection_limit,
    unsigned int connection_timeout_seconds, size_t connection_memory_limit,
    MHD_AccessHandlerCallback access_handler, void *access_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    herald_uri_log_callback uri_log, void *uri_log_cls)
{
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    struct sockaddr *address;
    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    if (inet_pton(AF_INET, host, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(port);
        address = (struct sockaddr *)&v4;
    } else if (inet_pton(AF_INET6, host, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(port);
        address = (struct sockaddr *)&v6;
        flags |= MHD_USE_IPv6;
    } else {
        return NULL;
    }
    return MHD_start_daemon(
        flags, port, NULL, NULL, access_handler, access_cls,
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_URI_LOG_CALLBACK, uri_log, uri_log_cls,
        MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
        MHD_OPTION_END);
}

/// The port the daemon listens on, for daemons started on port 0.
static inline uint16_t herald_mhd_bound_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// Writes the client's address as text into `buffer`; an empty string when unknown.
static inline void herald_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t size)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    buffer[0] = '\0';
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, (socklen_t)size);
    } else if (address->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, (socklen_t)size);
    }
}

/// An anonymous in-memory file holding `size` bytes from `bytes`, so a body served many times can go
/// out with sendfile instead of being copied for each response. -1 on failure. Not wrapped for
/// variadics like the rest: Swift's Glibc module does not export memfd_create.
static inline int herald_memory_file(const void *bytes, size_t size)
{
    int fd = memfd_create("herald-body", MFD_CLOEXEC);
    if (fd < 0) return -1;
    size_t written = 0;
    while (written < size) {
        ssize_t count = write(fd, (const char *)bytes + written, size - written);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) { close(fd); return -1; }
        written += (size_t)count;
    }
    return fd;
}

#endif
