/*
 * What the SQLite references share: failing with SQLite's message, running a statement text, and
 * preparing a statement kept for the whole run.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static void fail(sqlite3 *db, const char *what) {
    fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
    exit(1);
}

static void execute(sqlite3 *db, const char *sql) {
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) fail(db, sql);
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &statement, NULL) != SQLITE_OK) fail(db, sql);
    return statement;
}
