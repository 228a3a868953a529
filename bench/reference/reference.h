/*
 * What the references share: reading their rows (ROWS.tsv of events), the clocks, batch latency percentiles.
 *
 * ROWS.tsv, written by bench/events.py: one event a line, tab-separated, in Herald's stored forms: id, app_id,
 * campaign_id, type, occurred_at ("YYYY-MM-DD HH:MM:SS.mmm", UTC), day, platform, installation_id, detail,
 * language (empty for none), test (0/1), received_at.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { FIELDS = 12 };

/* Field numbers in a row. */
enum { ID, APP, CAMPAIGN, TYPE, OCCURRED, DAY, PLATFORM, INSTALLATION, DETAIL, LANGUAGE, TEST, RECEIVED };

/* The rows of `path`, `fields` strings each, row after row; a missing field reads as "". Exits on failure. */
static char **read_rows(const char *path, int fields, size_t *count) {
    FILE *input = fopen(path, "r");
    if (!input) {
        perror(path);
        exit(1);
    }
    size_t capacity = 1 << 16;
    char **table = malloc(capacity * fields * sizeof *table), *line = NULL;
    size_t length = 0;
    *count = 0;
    while (getline(&line, &length, input) > 0) {
        if (*count == capacity) table = realloc(table, (capacity *= 2) * fields * sizeof *table);
        char *copy = strdup(line), *cursor = copy, **row = table + *count * fields;
        copy[strcspn(copy, "\n")] = 0;
        for (int field = 0; field < fields; field++) row[field] = cursor ? strsep(&cursor, "\t") : "";
        (*count)++;
    }
    free(line);
    fclose(input);
    return table;
}

/* The events of ROWS.tsv, FIELDS strings each. */
static char **read_event_rows(const char *path, size_t *count) { return read_rows(path, FIELDS, count); }

static double now(clockid_t clock) {
    struct timespec time;
    clock_gettime(clock, &time);
    return time.tv_sec + time.tv_nsec / 1e9;
}

static int compare_doubles(const void *a, const void *b) {
    double left = *(const double *)a, right = *(const double *)b;
    return (left > right) - (left < right);
}

/* The value at `fraction` of `count` latencies, sorted first (0 when there are none). */
static double percentile(double *latencies, size_t count, double fraction) {
    qsort(latencies, count, sizeof *latencies, compare_doubles);
    return count ? latencies[(size_t)(count * fraction)] : 0.0;
}
