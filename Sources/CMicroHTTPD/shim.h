// Swift cannot call C variadic functions, and libmicrohttpd's start, daemon-info and
// connection-info calls are variadic: these inline wrappers give them fixed signatures. The socket
// address work around them (binding, per-address keys) is here too: it is plainer in C.
#ifndef HERALD_CMICROHTTPD_SHIM_H
#define HERALD_CMICROHTTPD_SHIM_H

#include <errno.h>
#include <linux/memfd.h>
#include <unistd.h>
// glibc declares memfd_create only under _GNU_SOURCE, and defining that here would give this module
// another view of the system headers than Dispatch's, which clang refuses in a clean build. This is
// glibc's own signature (since 2.27).
int memfd_create(const char *name, unsigned int flags);
#include <signal.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

typedef void *(*herald_uri_log_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

/// A listening TCP socket on `host` (an IPv4 or IPv6 literal) and `port` (0 = any free port):
/// non-blocking, because every event loop waits on it and only one wins each accept; SO_REUSEADDR
/// only, so a restart can bind while old connections linger, but a second server cannot share the port.
/// Returns the descriptor, -1 when it cannot bind (errno says why), -2 when `host` is not a literal.
static inline int herald_listen(const char *host, uint16_t port, int backlog)
{
    struct sockaddr_storage storage;
    socklen_t length;
    memset(&storage, 0, sizeof storage);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&storage;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&storage;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        length = sizeof *v4;
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        length = sizeof *v6;
    } else {
        return -2;
    }
    int fd = socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    /* An IPv6 address serves IPv6 only, as it did when libmicrohttpd made the socket. */
    if (storage.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    if (bind(fd, (struct sockaddr *)&storage, length) != 0 || listen(fd, backlog) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/// The port a socket is bound to; 0 when unknown.
static inline uint16_t herald_socket_port(int fd)
{
    struct sockaddr_storage storage;
    socklen_t length = sizeof storage;
    if (getsockname(fd, (struct sockaddr *)&storage, &length) != 0) return 0;
    if (storage.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&storage)->sin_port);
    if (storage.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&storage)->sin6_port);
    return 0;
}

/// Starts a daemon without a thread of its own, on an already listening socket (the daemon owns
/// `listen_fd` from here on): the caller's event loop runs it with MHD_run.
/// MHD_OPTION_STRICT_FOR_CLIENT stays at its default, 0: in 0.9.75, 1 only adds MHD's own 400 (without
/// our security headers) for a missing Host or a space in the target, and whitespace before a header's
/// colon is refused only at -1, the level meant to be lenient. The adapter refuses that itself.
static inline struct MHD_Daemon *herald_mhd_start(
    int listen_fd, unsigned int connection_limit,
    unsigned int connection_timeout_seconds, size_t connection_memory_limit,
    MHD_AcceptPolicyCallback accept_policy, void *accept_policy_cls,
    MHD_AccessHandlerCallback access_handler, void *access_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    herald_uri_log_callback uri_log, void *uri_log_cls,
    MHD_NotifyConnectionCallback notify_connection, void *notify_connection_cls)
{
    return MHD_start_daemon(
        MHD_USE_EPOLL | MHD_USE_ITC, 0, accept_policy, accept_policy_cls, access_handler, access_cls,
        MHD_OPTION_LISTEN_SOCKET, listen_fd,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_URI_LOG_CALLBACK, uri_log, uri_log_cls,
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, notify_connection_cls,
        // The event loops block SIGPIPE on their threads (herald_block_sigpipe), as MHD does on its
        // own: told so, MHD sends files with sendfile; otherwise it reads them and copies 4 KiB at a
        // time, which made a 70 KB feed cost about 9 times the CPU.
        MHD_OPTION_SIGPIPE_HANDLED_BY_APP, (int)1,
        MHD_OPTION_END);
}

/// Blocks SIGPIPE on the calling thread: a write to a socket the client closed then fails with EPIPE
/// instead of killing the process.
static inline void herald_block_sigpipe(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/// A response without a body and without Content-Length or Transfer-Encoding, for a 304. libmicrohttpd
/// writes a framing header for every other response (the 304's Content-Length would be the size given,
/// which wrk and other clients then wait for); only a response of unknown size in HTTP/1.0 mode goes
/// without one, and that mode closes the connection after it (with `Connection: close`).
static inline struct MHD_Response *herald_mhd_response_without_length(MHD_ContentReaderCallback never_called)
{
    struct MHD_Response *response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1, never_called, NULL, NULL);
    if (response != NULL && MHD_set_response_options(response, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END) != MHD_YES) {
        MHD_destroy_response(response);
        return NULL;
    }
    return response;
}

/// What a content reader returns at the end of its body, and when it cannot go on (MHD then closes the
/// connection without the last chunk). Swift does not import MHD's macros for them: they are casts.
static const ssize_t herald_content_reader_end_of_stream = MHD_CONTENT_READER_END_OF_STREAM;
static const ssize_t herald_content_reader_end_with_error = MHD_CONTENT_READER_END_WITH_ERROR;

/// The daemon's epoll descriptor, readable whenever MHD_run has something to do; -1 when unknown.
static inline int herald_mhd_epoll_fd(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info == NULL ? -1 : info->epoll_fd;
}

/// The connection's socket; -1 when unknown.
static inline int herald_mhd_connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// The bytes of the request's head, from the request line to the empty line after the headers, which
/// libmicrohttpd parsed in place; 0 before the head is whole.
static inline size_t herald_mhd_request_head_size(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}

/// What the connection-started notification stored for the connection.
static inline void *herald_mhd_socket_context(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/// Whom a connection counts against for the per-address limit: an IPv4 address (also when it arrives
/// IPv4-mapped on an IPv6 socket), or an IPv6 /64, the block one subscriber is given.
typedef struct {
    int family;      /* 4 or 6; 0 for an address of another family */
    uint64_t value;  /* the IPv4 address, or the first 64 bits of the IPv6 address */
} herald_address_key;

static inline herald_address_key herald_address_key_of(const struct sockaddr *address)
{
    herald_address_key key = {0, 0};
    if (address == NULL) return key;
    if (address->sa_family == AF_INET) {
        key.family = 4;
        key.value = ntohl(((const struct sockaddr_in *)address)->sin_addr.s_addr);
    } else if (address->sa_family == AF_INET6) {
        const struct in6_addr *v6 = &((const struct sockaddr_in6 *)address)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(v6)) {
            key.family = 4;
            key.value = ((uint64_t)v6->s6_addr[12] << 24) | ((uint64_t)v6->s6_addr[13] << 16)
                | ((uint64_t)v6->s6_addr[14] << 8) | v6->s6_addr[15];
        } else {
            key.family = 6;
            for (int index = 0; index < 8; index++) key.value = (key.value << 8) | v6->s6_addr[index];
        }
    }
    return key;
}

/// The key as text for logs: an IPv4 address or an IPv6 /64.
static inline void herald_address_key_text(herald_address_key key, char *buffer, size_t size)
{
    buffer[0] = '\0';
    if (key.family == 4) {
        struct in_addr v4;
        v4.s_addr = htonl((uint32_t)key.value);
        inet_ntop(AF_INET, &v4, buffer, (socklen_t)size);
    } else if (key.family == 6) {
        struct in6_addr v6;
        memset(&v6, 0, sizeof v6);
        for (int index = 0; index < 8; index++) v6.s6_addr[index] = (uint8_t)(key.value >> (56 - 8 * index));
        if (inet_ntop(AF_INET6, &v6, buffer, (socklen_t)size) != NULL && strlen(buffer) + 4 < size) strcat(buffer, "/64");
    }
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
