/*
 * The reference for Herald's installation registrations: the same statements into the same schema (a
 * database made by `herald migrate`, with the benchmark's app), with Herald's pragmas (WAL,
 * synchronous=FULL, a 32 MB page cache), from one process, as fast as SQLite's C API goes. Herald answers
 * a registration only once it is durable and shares each commit's sync among the registrations waiting
 * for it (its group commit), so with N clients, each waiting for its answer before sending the next, no
 * commit can hold more than N: the reference commits GROUP registrations a transaction, GROUP being the
 * benchmark's client count. Each registration, as Herald's store does it: the installation's id looked
 * up, its token taken from any other installation of the app holding it, the upsert, the row read back.
 *
 *   cc -O2 -o sqlite_register sqlite_register.c -lsqlite3
 *   sqlite_register DATABASE ROWS.tsv APP_ID GROUP
 *
 * ROWS.tsv: one registration a line, tab-separated: installation_id, platform, push_provider,
 * push_token, app_version, language, country, time_zone, received_at ("YYYY-MM-DD HH:MM:SS.mmm", UTC).
 * Prints one line: `registrations=N seconds=S cpu_seconds=C`.
 */
#include "reference.h"
#include "sqlite_reference.h"

enum { REGISTRATION_FIELDS = 9 };
/* Field numbers in a registration row (reference.h numbers an event's). */
enum { R_INSTALLATION, R_PLATFORM, R_PROVIDER, R_TOKEN, R_VERSION, R_LANGUAGE, R_COUNTRY, R_ZONE, R_RECEIVED_AT };

/* Steps `statement` to its end, reading (and dropping) any rows, then resets it. */
static void run(sqlite3 *db, sqlite3_stmt *statement) {
    int status;
    while ((status = sqlite3_step(statement)) == SQLITE_ROW) {
        for (int column = 0; column < sqlite3_column_count(statement); column++) (void)sqlite3_column_text(statement, column);
    }
    if (status != SQLITE_DONE) fail(db, sqlite3_sql(statement));
    sqlite3_reset(statement);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s DATABASE ROWS.tsv APP_ID GROUP\n", argv[0]);
        return 2;
    }
    size_t count;
    char **rows = read_rows(argv[2], REGISTRATION_FIELDS, &count);
    long long app = atoll(argv[3]);
    size_t group = (size_t)atoll(argv[4]);
    if (group < 1) group = 1;

    sqlite3 *db;
    if (sqlite3_open(argv[1], &db) != SQLITE_OK) fail(db, argv[1]);
    execute(db, "PRAGMA journal_mode = WAL");
    execute(db, "PRAGMA synchronous = FULL");
    execute(db, "PRAGMA cache_size = -32768");
    execute(db, "PRAGMA foreign_keys = ON");
    sqlite3_stmt *existing = prepare(db, "SELECT id FROM installations WHERE app_id = ?1 AND installation_id = ?2");
    sqlite3_stmt *take_over = prepare(db,
        "UPDATE installations SET push_token = NULL, push_provider = NULL, updated_at = ?1 "
        "WHERE app_id = ?2 AND push_provider = ?3 AND push_token = ?4 AND installation_id <> ?5");
    sqlite3_stmt *upsert = prepare(db,
        "INSERT INTO installations (app_id, installation_id, platform, push_provider, push_token, app_version, language, country, "
        "time_zone, notifications_allowed, created_at, updated_at, registered_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?10, ?10) "
        "ON CONFLICT (app_id, installation_id) DO UPDATE SET platform = excluded.platform, "
        "push_provider = CASE WHEN excluded.push_token IS NOT NULL OR token_removed_at IS NULL THEN excluded.push_provider ELSE push_provider END, "
        "push_token = excluded.push_token, app_version = excluded.app_version, language = excluded.language, country = excluded.country, "
        "time_zone = excluded.time_zone, notifications_allowed = excluded.notifications_allowed, "
        "token_removed_at = CASE WHEN ?11 THEN NULL ELSE token_removed_at END, "
        "token_removed_reason = CASE WHEN ?11 THEN NULL ELSE token_removed_reason END, "
        "updated_at = excluded.updated_at, registered_at = excluded.registered_at");
    sqlite3_stmt *read_back = prepare(db, "SELECT * FROM installations WHERE app_id = ?1 AND installation_id = ?2");

    double started = now(CLOCK_MONOTONIC), cpu_started = now(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t first = 0; first < count; first += group) {
        execute(db, "BEGIN IMMEDIATE");
        for (size_t index = first; index < first + group && index < count; index++) {
            char **row = rows + index * REGISTRATION_FIELDS;
            sqlite3_bind_int64(existing, 1, app);
            sqlite3_bind_text(existing, 2, row[R_INSTALLATION], -1, SQLITE_STATIC);
            run(db, existing);
            sqlite3_bind_text(take_over, 1, row[R_RECEIVED_AT], -1, SQLITE_STATIC);
            sqlite3_bind_int64(take_over, 2, app);
            sqlite3_bind_text(take_over, 3, row[R_PROVIDER], -1, SQLITE_STATIC);
            sqlite3_bind_text(take_over, 4, row[R_TOKEN], -1, SQLITE_STATIC);
            sqlite3_bind_text(take_over, 5, row[R_INSTALLATION], -1, SQLITE_STATIC);
            run(db, take_over);
            sqlite3_bind_int64(upsert, 1, app);
            for (int field = R_INSTALLATION; field <= R_ZONE; field++) sqlite3_bind_text(upsert, field + 2, row[field], -1, SQLITE_STATIC);
            sqlite3_bind_text(upsert, 10, row[R_RECEIVED_AT], -1, SQLITE_STATIC);
            sqlite3_bind_int(upsert, 11, 1);
            run(db, upsert);
            sqlite3_bind_int64(read_back, 1, app);
            sqlite3_bind_text(read_back, 2, row[R_INSTALLATION], -1, SQLITE_STATIC);
            run(db, read_back);
        }
        execute(db, "COMMIT");
    }
    printf("registrations=%zu seconds=%.3f cpu_seconds=%.3f\n", count, now(CLOCK_MONOTONIC) - started,
           now(CLOCK_PROCESS_CPUTIME_ID) - cpu_started);
    sqlite3_close(db);
    return 0;
}
