/*
 * The reference for Herald's feed (GET /api/v1/feed): the least a program on the same libmicrohttpd
 * 0.9.75 does to send the same bytes with the same headers, so that bench/feed.py can tell Herald's own
 * cost per request from the library's. What it mirrors of Herald, and why:
 *
 * - The body lives in an anonymous in-memory file (memfd), as Herald keeps a shared body, and each 200
 *   is a response made for the request over a dup() of that descriptor (MHD closes its copy when done),
 *   so MHD sends it with sendfile from the same kind of pages.
 * - The header block: the headers given with -h on every answer, those given with -b only on a 200 (as
 *   Herald adds Content-Type only when it sends the body), and an X-Request-Id made per request as Herald
 *   makes its own (a per-process random prefix, a dash, a counter in hex), because Herald sends one on
 *   every answer and its bytes and the work of adding it are part of the answer. MHD adds Date itself,
 *   for both programs.
 * - If-None-Match compared weakly, as RFC 9110 §13.1.2 asks and Herald does: `*`, or any listed tag with
 *   the same opaque tag, W/ or not; a value that is not a list of tags is ignored. A matching request is
 *   answered 304 with the -h headers and no body, framed as Herald frames it (see not_modified below).
 * - Herald's limits as bench/feed.py runs it: a connection limit of 16,384, a 30 s connection timeout,
 *   a 32 KiB memory pool per connection, no limit per address, the backlog SOMAXCONN, 127.0.0.1 only.
 * - epoll, and MHD's own pool of two threads, one a core of the 2-core benchmark machine, as issue 39
 *   measured it. Herald instead drives one daemon per loop of its own (four on two cores) with MHD_run;
 *   a pool is how a plain program on the library runs, and the closest to one thread per core.
 *
 * What it leaves out is Herald's own work above the library: the connection registry and deadlines, the
 * request's routing, key lookup, the feed snapshot, the request log line and metrics.
 *
 *   cc -O2 -o mhd_feed mhd_feed.c -lmicrohttpd
 *   mhd_feed [-p PORT] [-h 'Name: value']... [-b 'Name: value']... BODY_FILE ETAG
 *
 * Serves BODY_FILE on every path with ETag: ETAG. Prints `port N` once it listens (PORT 0, the default,
 * takes a free one); stops on SIGTERM or SIGINT.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

enum { MOST_HEADERS = 32 };

struct header {
    char *name, *value;
};

/* Everything the handler reads; set before the daemon starts and not changed after. */
static struct {
    int body;                 /* the memfd holding the body */
    uint64_t size;
    const char *etag;         /* as sent, W/ and quotes included */
    const char *opaque;       /* the part between its quotes */
    size_t opaque_length;
    struct header every[MOST_HEADERS], ok_only[MOST_HEADERS];
    int every_count, ok_only_count;
    unsigned request_id_prefix;
} feed;

static atomic_ullong requests_answered;

/* "Name: value" split at its colon, the blanks after it skipped; exits on a header without one. */
static struct header parse_header(char *text) {
    char *colon = strchr(text, ':');
    if (!colon) {
        fprintf(stderr, "not a header (Name: value): %s\n", text);
        exit(2);
    }
    *colon = 0;
    char *value = colon + 1;
    while (*value == ' ' || *value == '\t') value++;
    return (struct header){text, value};
}

/* The body file's bytes copied into an anonymous in-memory file. */
static int memory_file(const char *path, uint64_t *size) {
    FILE *input = fopen(path, "rb");
    int file = memfd_create("mhd-feed-body", MFD_CLOEXEC);
    if (!input || file < 0) {
        perror(path);
        exit(1);
    }
    char buffer[1 << 16];
    size_t count;
    *size = 0;
    while ((count = fread(buffer, 1, sizeof buffer, input)) > 0) {
        if (write(file, buffer, count) != (ssize_t)count) {
            perror("memfd");
            exit(1);
        }
        *size += count;
    }
    fclose(input);
    return file;
}

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

/* RFC 9110 §8.8.3 etagc: `!`, `#` to `~`, and obs-text. */
static bool is_tag_byte(unsigned char c) { return c == 0x21 || (c >= 0x23 && c != 0x7F); }

/* Whether an If-None-Match value matches the feed's tag weakly (RFC 9110 §13.1.2). The value a client
 * sends back is usually the tag it got, compared whole first, as Herald does. */
static bool none_match(const char *value) {
    if (!value) return false;
    if (strcmp(value, feed.etag) == 0) return true;
    const char *cursor = value;
    while (is_blank(*cursor)) cursor++;
    if (*cursor == '*') {
        do cursor++; while (is_blank(*cursor));
        return *cursor == 0;
    }
    bool matched = false, any = false;
    for (;;) {
        while (is_blank(*cursor) || *cursor == ',') cursor++;
        if (!*cursor) break;
        if (cursor[0] == 'W' && cursor[1] == '/') cursor += 2;
        if (*cursor++ != '"') return false;
        const char *start = cursor;
        while (is_tag_byte((unsigned char)*cursor)) cursor++;
        if (*cursor != '"') return false;
        matched |= (size_t)(cursor - start) == feed.opaque_length && memcmp(start, feed.opaque, feed.opaque_length) == 0;
        any = true;
        cursor++;
        while (is_blank(*cursor)) cursor++;
        if (*cursor && *cursor != ',') return false;
    }
    return any && matched;
}

/* Never called: MHD sends no body after a 304's header block. */
static ssize_t no_body(void *cls, uint64_t position, char *buffer, size_t capacity) {
    (void)cls, (void)position, (void)buffer, (void)capacity;
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

/* A 304 as Herald makes it: libmicrohttpd 0.9.75 writes the response's size as Content-Length on a 304,
 * and the only response it writes without one is of unknown size in its HTTP/1.0-compatible mode, which
 * sends `Connection: close` and closes the connection after the answer. Herald sends that (no
 * Content-Length, as nginx does), so the reference does too, and pays the same new connection per 304. */
static struct MHD_Response *not_modified(void) {
    struct MHD_Response *response = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1, no_body, NULL, NULL);
    if (response && MHD_set_response_options(response, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END) != MHD_YES) {
        MHD_destroy_response(response);
        return NULL;
    }
    return response;
}

/* The body over a duplicate of the memfd, as Herald makes a shared body's response. */
static struct MHD_Response *whole_feed(void) {
    int copy = dup(feed.body);
    if (copy < 0) return NULL;
    struct MHD_Response *response = MHD_create_response_from_fd_at_offset64(feed.size, copy, 0);
    if (!response) close(copy);
    return response;
}

static void add_headers(struct MHD_Response *response, const struct header *headers, int count) {
    for (int index = 0; index < count; index++) MHD_add_response_header(response, headers[index].name, headers[index].value);
}

/* Answers on the second call, after MHD has read the (empty) body, as Herald does: an answer queued on
 * the first call, with only the head read, makes MHD 0.9.75 close the connection after it. The first
 * call marks the request with a pointer to itself, which costs no allocation. */
static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **request) {
    (void)cls, (void)url, (void)version, (void)upload_data;
    if (!*request) {
        *request = (void *)answer;
        return MHD_YES;
    }
    if (*upload_data_size) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) return MHD_NO;
    bool unchanged = none_match(MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH));
    struct MHD_Response *response = unchanged ? not_modified() : whole_feed();
    if (!response) return MHD_NO;
    char request_id[32];
    snprintf(request_id, sizeof request_id, "%x-%llx", feed.request_id_prefix,
             atomic_fetch_add_explicit(&requests_answered, 1, memory_order_relaxed) + 1);
    MHD_add_response_header(response, "ETag", feed.etag);
    add_headers(response, feed.every, feed.every_count);
    if (!unchanged) add_headers(response, feed.ok_only, feed.ok_only_count);
    MHD_add_response_header(response, "X-Request-Id", request_id);
    enum MHD_Result queued = MHD_queue_response(connection, unchanged ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK, response);
    MHD_destroy_response(response);
    return queued;
}

static void add_to(struct header *headers, int *count, char *text) {
    if (*count == MOST_HEADERS) {
        fprintf(stderr, "more than %d headers\n", MOST_HEADERS);
        exit(2);
    }
    headers[(*count)++] = parse_header(text);
}

int main(int argc, char **argv) {
    unsigned port = 0;
    int option;
    while ((option = getopt(argc, argv, "p:h:b:")) != -1) {
        if (option == 'p') port = (unsigned)atoi(optarg);
        else if (option == 'h') add_to(feed.every, &feed.every_count, optarg);
        else if (option == 'b') add_to(feed.ok_only, &feed.ok_only_count, optarg);
        else return 2;
    }
    if (argc - optind != 2) {
        fprintf(stderr, "usage: %s [-p PORT] [-h 'Name: value']... [-b 'Name: value']... BODY_FILE ETAG\n", argv[0]);
        return 2;
    }
    feed.body = memory_file(argv[optind], &feed.size);
    feed.etag = argv[optind + 1];
    feed.opaque = strchr(feed.etag, '"');
    if (!feed.opaque || strlen(feed.opaque) < 2 || feed.opaque[strlen(feed.opaque) - 1] != '"') {
        fprintf(stderr, "not an entity tag: %s\n", feed.etag);
        return 2;
    }
    feed.opaque++;
    feed.opaque_length = strlen(feed.opaque) - 1;
    /* Herald's prefix is at least 0x10000000, so always eight hex digits. */
    if (getrandom(&feed.request_id_prefix, sizeof feed.request_id_prefix, 0) != sizeof feed.request_id_prefix) return 1;
    feed.request_id_prefix |= 0x10000000;

    /* Blocked before MHD starts its threads, which inherit the mask, so that sigwait below takes them. */
    sigset_t stopping;
    sigemptyset(&stopping);
    sigaddset(&stopping, SIGTERM);
    sigaddset(&stopping, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stopping, NULL);

    struct sockaddr_in loopback = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_EPOLL_INTERNAL_THREAD, (uint16_t)port, NULL, NULL, answer, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&loopback,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)2,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)16384,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)SOMAXCONN,
        MHD_OPTION_END);
    if (!daemon) {
        fprintf(stderr, "libmicrohttpd did not start on port %u\n", port);
        return 1;
    }
    const union MHD_DaemonInfo *bound = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    printf("port %u\n", bound ? bound->port : port);
    fflush(stdout);
    int signal;
    sigwait(&stopping, &signal);
    MHD_stop_daemon(daemon);
    close(feed.body);
    return 0;
}
