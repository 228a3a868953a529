/*
 * The reference for Herald's ingestion: the same rows into the same schema (a database made by
 * `herald migrate`), with Herald's pragmas (WAL, synchronous=FULL, a 32 MB page cache), from one
 * process, as fast as SQLite's C API goes. Each 1000-row batch is one transaction: prepared inserts
 * (INSERT OR IGNORE, so a duplicate id counts once), then, as Herald does, one upsert per distinct row
 * of the rollups by platform and detail and of the rollups by language, found by sorting the batch's
 * new events; each installation's number in its app (looked up, or given out from the app's counter),
 * and one read and write of each device bitmap chunk (campaign, test, kind, day, 4096 devices) the batch
 * touches: every event's device in `seen`, an impression's in `exposed` too, a conversion's in `converted`. Only the transactions are timed, not reading the rows.
 *
 *   cc -O2 -o sqlite_ingest sqlite_ingest.c -lsqlite3
 *   sqlite_ingest DATABASE ROWS.tsv
 *
 * ROWS.tsv: one event a line, tab-separated: id, app_id, campaign_id, type, occurred_at, day,
 * platform, installation_id, detail, language (empty for none), test (0/1), received_at (reference.h).
 * Prints one line: `events=N seconds=S cpu_seconds=C batch_p50_ms=P batch_p99_ms=Q`.
 */
#include "reference.h"
#include "sqlite_reference.h"

enum { BATCH = 1000 };

typedef struct {
    char **field; /* FIELDS of them */
    long long number; /* the installation's number in its app, once known */
} Row;

enum { CHUNK_BITS = 4096 };

/* Binds a field as Herald does: numbers as integers, text as text, and an empty installation or
 * language as NULL in an event (`nullable`). */
static void bind(sqlite3_stmt *statement, int index, const Row *row, int field, int nullable) {
    const char *value = row->field[field];
    if (field == APP || field == CAMPAIGN || field == TEST) sqlite3_bind_int64(statement, index, atoll(value));
    else if (*value || !nullable) sqlite3_bind_text(statement, index, value, -1, SQLITE_STATIC);
    else sqlite3_bind_null(statement, index);
}

static void step(sqlite3 *db, sqlite3_stmt *statement) {
    if (sqlite3_step(statement) != SQLITE_DONE) fail(db, sqlite3_sql(statement));
    sqlite3_reset(statement);
}

/* Orders new events by the columns of one rollup key, so that equal keys are adjacent. */
static const int *sort_columns;
static int compare(const void *a, const void *b) {
    const Row *left = *(Row *const *)a, *right = *(Row *const *)b;
    for (const int *column = sort_columns; *column >= 0; column++) {
        int order = strcmp(left->field[*column], right->field[*column]);
        if (order) return order;
    }
    return 0;
}

/* A device of one kind (`seen`, `exposed`, `converted`) in a row's campaign, test flag and day. */
typedef struct {
    Row *row;
    const char *kind;
} Sighting;

/* Orders sightings by their bitmap chunk's key: campaign, test, kind, day, chunk of the device number. */
static int compare_chunks(const void *a, const void *b) {
    const Sighting *left = a, *right = b;
    static const int before_kind[] = {CAMPAIGN, TEST}, after_kind[] = {DAY};
    for (int index = 0; index < 2; index++) {
        int order = strcmp(left->row->field[before_kind[index]], right->row->field[before_kind[index]]);
        if (order) return order;
    }
    int order = strcmp(left->kind, right->kind);
    if (order) return order;
    order = strcmp(left->row->field[after_kind[0]], right->row->field[after_kind[0]]);
    if (order) return order;
    long long left_chunk = left->row->number / CHUNK_BITS, right_chunk = right->row->number / CHUNK_BITS;
    return (left_chunk > right_chunk) - (left_chunk < right_chunk);
}

/* One upsert per distinct key (the `columns` of `rows`), binding the key's columns, then its count. */
static void upsert_distinct(sqlite3 *db, sqlite3_stmt *statement, Row **rows, int count, const int *columns) {
    sort_columns = columns;
    qsort(rows, count, sizeof *rows, compare);
    for (int start = 0; start < count;) {
        int end = start + 1;
        while (end < count && compare(&rows[start], &rows[end]) == 0) end++;
        int index = 1;
        for (const int *column = columns; *column >= 0; column++) bind(statement, index++, rows[start], *column, 0);
        sqlite3_bind_int(statement, index, end - start);
        step(db, statement);
        start = end;
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DATABASE ROWS.tsv\n", argv[0]);
        return 2;
    }
    size_t count;
    char **fields = read_event_rows(argv[2], &count);
    Row *rows = malloc((count ? count : 1) * sizeof *rows);
    for (size_t index = 0; index < count; index++) rows[index].field = fields + index * FIELDS;

    sqlite3 *db;
    if (sqlite3_open(argv[1], &db) != SQLITE_OK) fail(db, argv[1]);
    execute(db, "PRAGMA journal_mode = WAL");
    execute(db, "PRAGMA synchronous = FULL");
    execute(db, "PRAGMA cache_size = -32768");
    sqlite3_stmt *insert = prepare(db,
        "INSERT OR IGNORE INTO events (id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, detail, url, test,"
        " received_at, language) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)");
    sqlite3_stmt *rollup = prepare(db,
        "INSERT INTO event_rollups (campaign_id, day, platform, test, type, detail, count) VALUES (?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (campaign_id, day, platform, test, type, detail) DO UPDATE SET count = count + excluded.count");
    sqlite3_stmt *language_rollup = prepare(db,
        "INSERT INTO event_language_rollups (campaign_id, day, test, language, type, count) VALUES (?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (campaign_id, day, test, language, type) DO UPDATE SET count = count + excluded.count");
    sqlite3_stmt *find_number = prepare(db, "SELECT number FROM device_numbers WHERE app_id = ? AND installation_id = ?");
    sqlite3_stmt *add_number = prepare(db, "INSERT INTO device_numbers (app_id, installation_id, number) VALUES (?, ?, ?)");
    sqlite3_stmt *next_number = prepare(db, "SELECT next_number FROM device_number_counters WHERE app_id = ?");
    sqlite3_stmt *advance = prepare(db,
        "INSERT INTO device_number_counters (app_id, next_number) VALUES (?, ?)"
        " ON CONFLICT (app_id) DO UPDATE SET next_number = excluded.next_number");
    sqlite3_stmt *read_chunk = prepare(db,
        "SELECT bits FROM device_bitmaps WHERE campaign_id = ? AND test = ? AND kind = ? AND day = ? AND chunk = ?");
    sqlite3_stmt *write_chunk = prepare(db,
        "INSERT INTO device_bitmaps (campaign_id, test, kind, day, chunk, bits) VALUES (?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (campaign_id, test, kind, day, chunk) DO UPDATE SET bits = excluded.bits");
    static const int rollup_key[] = {CAMPAIGN, DAY, PLATFORM, TEST, TYPE, DETAIL, -1};
    static const int language_key[] = {CAMPAIGN, DAY, TEST, LANGUAGE, TYPE, -1};

    size_t batches = (count + BATCH - 1) / BATCH;
    double *latencies = malloc((batches ? batches : 1) * sizeof *latencies);
    Row *fresh[BATCH];
    Sighting sightings[2 * BATCH];
    double started = now(CLOCK_MONOTONIC), cpu_started = now(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t batch = 0; batch < batches; batch++) {
        double batch_started = now(CLOCK_MONOTONIC);
        execute(db, "BEGIN");
        int inserted = 0;
        for (size_t index = batch * BATCH; index < count && index < (batch + 1) * BATCH; index++) {
            Row *row = &rows[index];
            static const int columns[] = {ID, APP, CAMPAIGN, TYPE, OCCURRED, DAY, PLATFORM, INSTALLATION, DETAIL, TEST, RECEIVED, LANGUAGE};
            for (int column = 0; column < 12; column++) {
                bind(insert, column + 1, row, columns[column], columns[column] == INSTALLATION || columns[column] == LANGUAGE);
            }
            step(db, insert);
            if (sqlite3_changes(db) > 0) fresh[inserted++] = row;
        }
        /* The language rollup keys the default version as '' rather than NULL, as Herald does. */
        upsert_distinct(db, rollup, fresh, inserted, rollup_key);
        upsert_distinct(db, language_rollup, fresh, inserted, language_key);
        int with_device = 0;
        for (int index = 0; index < inserted; index++) if (*fresh[index]->field[INSTALLATION]) fresh[with_device++] = fresh[index];
        for (int index = 0; index < with_device; index++) {
            Row *row = fresh[index];
            bind(find_number, 1, row, APP, 0);
            bind(find_number, 2, row, INSTALLATION, 0);
            if (sqlite3_step(find_number) == SQLITE_ROW) {
                row->number = sqlite3_column_int64(find_number, 0);
                sqlite3_reset(find_number);
                continue;
            }
            sqlite3_reset(find_number);
            bind(next_number, 1, row, APP, 0);
            row->number = sqlite3_step(next_number) == SQLITE_ROW ? sqlite3_column_int64(next_number, 0) : 0;
            sqlite3_reset(next_number);
            bind(add_number, 1, row, APP, 0);
            bind(add_number, 2, row, INSTALLATION, 0);
            sqlite3_bind_int64(add_number, 3, row->number);
            step(db, add_number);
            bind(advance, 1, row, APP, 0);
            sqlite3_bind_int64(advance, 2, row->number + 1);
            step(db, advance);
        }
        int sighted = 0;
        for (int index = 0; index < with_device; index++) {
            sightings[sighted++] = (Sighting){fresh[index], "seen"};
            const char *type = fresh[index]->field[TYPE];
            if (!strcmp(type, "impression")) sightings[sighted++] = (Sighting){fresh[index], "exposed"};
            else if (!strcmp(type, "conversion")) sightings[sighted++] = (Sighting){fresh[index], "converted"};
        }
        qsort(sightings, sighted, sizeof *sightings, compare_chunks);
        for (int start = 0; start < sighted;) {
            int end = start + 1;
            while (end < sighted && compare_chunks(&sightings[start], &sightings[end]) == 0) end++;
            unsigned char bits[CHUNK_BITS / 8] = {0};
            Row *first = sightings[start].row;
            bind(read_chunk, 1, first, CAMPAIGN, 0);
            bind(read_chunk, 2, first, TEST, 0);
            sqlite3_bind_text(read_chunk, 3, sightings[start].kind, -1, SQLITE_STATIC);
            bind(read_chunk, 4, first, DAY, 0);
            sqlite3_bind_int64(read_chunk, 5, first->number / CHUNK_BITS);
            if (sqlite3_step(read_chunk) == SQLITE_ROW && sqlite3_column_bytes(read_chunk, 0) == sizeof bits) {
                memcpy(bits, sqlite3_column_blob(read_chunk, 0), sizeof bits);
            }
            sqlite3_reset(read_chunk);
            int changed = 0;
            for (int index = start; index < end; index++) {
                long long offset = sightings[index].row->number % CHUNK_BITS;
                unsigned char mask = 1u << (offset % 8);
                if (!(bits[offset / 8] & mask)) { bits[offset / 8] |= mask; changed = 1; }
            }
            if (changed) {
                bind(write_chunk, 1, first, CAMPAIGN, 0);
                bind(write_chunk, 2, first, TEST, 0);
                sqlite3_bind_text(write_chunk, 3, sightings[start].kind, -1, SQLITE_STATIC);
                bind(write_chunk, 4, first, DAY, 0);
                sqlite3_bind_int64(write_chunk, 5, first->number / CHUNK_BITS);
                sqlite3_bind_blob(write_chunk, 6, bits, sizeof bits, SQLITE_STATIC);
                step(db, write_chunk);
            }
            start = end;
        }
        execute(db, "COMMIT");
        latencies[batch] = (now(CLOCK_MONOTONIC) - batch_started) * 1000;
    }
    double seconds = now(CLOCK_MONOTONIC) - started, cpu_seconds = now(CLOCK_PROCESS_CPUTIME_ID) - cpu_started;
    printf("events=%zu seconds=%.3f cpu_seconds=%.3f batch_p50_ms=%.2f batch_p99_ms=%.2f\n", count, seconds, cpu_seconds,
           percentile(latencies, batches, 0.5), percentile(latencies, batches, 0.99));
    sqlite3_close(db);
    return 0;
}
