/*
 * The reference for Herald's ingestion on PostgreSQL: the same rows into the same schema (a database made
 * by `herald migrate`), with the server's durability as Herald has it (nothing is changed for the session:
 * with synchronous_commit and fsync on, each COMMIT returns once its WAL is on disk), from one process over
 * one connection. Each 1000-row batch is one transaction of the statements PostgresEventStore sends for a
 * group commit, each prepared once and bound as binary arrays read with `unnest`, as Herald binds them:
 *
 *   - the batch's first row of each id, in key order, into event_ids (ON CONFLICT DO NOTHING) and, for the
 *     ids that were new there, into events: one statement, Herald's, which answers the new ids;
 *   - the new events' rollups by platform and detail and by language, counted here: one upsert each;
 *   - device numbers: the batch's installations looked up; those without one numbered from their app's
 *     counter under the app's transaction lock (looked up again under it, as Herald does);
 *   - under a transaction lock per campaign, test flag, kind and day: the bitmap chunks the batch touches read
 *     (every event's device in `seen`, an impression's in `exposed` too, a conversion's in `converted`),
 *     their bits set here, the changed ones written; then each of those days' sketch (4096 HyperLogLog
 *     registers, and its chunk count) read, raised, written; then each of those days' week's (Monday to
 *     Sunday, device_week_sketches) likewise, under a lock per campaign, test flag and week.
 *
 * What differs, each in the reference's favour: an absent installation or language is a NULL element of
 * its array (Herald sends '' with a flag array and a CASE); each kind of lock is one statement
 * (Herald takes each lock with a statement of its own); statements are parsed once (Herald's are parsed
 * each time). They are still planned at each run, with the arrays they get, as Herald's unnamed statements
 * are: the generic plan that PostgreSQL's default (`plan_cache_mode = auto`) picks after five runs looks a
 * batch's device numbers up by filtering every number of the app against the array, 100 ms a batch at
 * 6,000 devices and growing with them; forced generic plans, made on the first batch's empty tables, were
 * 7 % cheaper at 20,000 events and are not known to stay good as the tables grow. A month's partition of `events` is made in its own transaction by the first batch
 * received in it (herald_events_partition), as Herald makes it. Only the batches are timed.
 *
 *   cc -O2 -I$(pg_config --includedir) -o postgres_ingest postgres_ingest.c -lpq
 *   postgres_ingest CONNINFO ROWS.tsv
 *
 * ROWS.tsv as reference.h describes it (its received_at is not used: a batch is received when its transaction
 * starts, to the millisecond, as Herald stores it). Once connected, prepared and the rows read, it prints
 * `ready` and waits for a line (or the end) on its standard input; after the batches it prints one line,
 * `events=N stored=M seconds=S cpu_seconds=C batch_p50_ms=P batch_p99_ms=Q synchronous_commit=on fsync=on`
 * (the last two as the server has them), and waits again before it disconnects: whoever measures the
 * server's CPU reads it at the two waits, while this connection's backend still lives.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <libpq-fe.h>
#include <stdint.h>

#include "reference.h"

enum { BATCH = 1000, CHUNK_BITS = 4096, CHUNK_BYTES = CHUNK_BITS / 8, PRECISION = 12, REGISTERS = 1 << PRECISION };

/* Type oids (PostgreSQL's pg_type.dat). */
enum { BOOL = 16, BYTEA = 17, INT8 = 20, TEXT = 25, TIMESTAMPTZ = 1184,
       BOOL_ARRAY = 1000, BYTEA_ARRAY = 1001, TEXT_ARRAY = 1009, INT8_ARRAY = 1016, TIMESTAMPTZ_ARRAY = 1185 };

/* Seconds from the Unix epoch to PostgreSQL's (2000-01-01 UTC), from which a binary timestamptz counts microseconds. */
static const long long POSTGRES_EPOCH = 946684800;

typedef struct {
    char *id, *type, *day, *platform, *installation, *detail, *language; /* installation, language: NULL for none */
    long long app, campaign, occurred; /* occurred: a binary timestamptz */
    long long number; /* the installation's number in its app, once known */
    int test, arrival, stored;
} Row;

static void fail(PGconn *db, const char *what) {
    fprintf(stderr, "%s: %s\n", what, PQerrorMessage(db));
    exit(1);
}

/* ---- Binary parameters: an array as array_recv reads it, a header then each element's length and bytes. ---- */

typedef struct {
    char *bytes;
    int length, capacity, count, nulls;
    unsigned element;
} Array;

enum { ARRAY_HEADER = 20 }; /* dimensions, has-nulls flag, element oid, length and lower bound of the one dimension */

static void put(Array *array, const void *bytes, int length) {
    if (array->length + length > array->capacity) {
        array->capacity = 2 * (array->length + length);
        array->bytes = realloc(array->bytes, array->capacity);
    }
    memcpy(array->bytes + array->length, bytes, length);
    array->length += length;
}

static void start(Array *array, unsigned element) {
    array->element = element;
    array->length = array->count = array->nulls = 0;
    char header[ARRAY_HEADER] = {0};
    put(array, header, sizeof header);
}

static void add(Array *array, const void *value, int length) {
    uint32_t prefix = htobe32((uint32_t)length);
    put(array, &prefix, 4);
    if (length > 0) put(array, value, length);
    array->count++;
}

static void add_text(Array *array, const char *text) {
    if (text) {
        add(array, text, (int)strlen(text));
    } else {
        add(array, NULL, -1);
        array->nulls = 1;
    }
}

static void add_int8(Array *array, long long value) {
    uint64_t big = htobe64((uint64_t)value);
    add(array, &big, 8);
}

static void add_bool(Array *array, int value) {
    char byte = value != 0;
    add(array, &byte, 1);
}

static void finish(Array *array) {
    uint32_t header[5] = {htobe32(1), htobe32(array->nulls), htobe32(array->element), htobe32(array->count), htobe32(1)};
    memcpy(array->bytes, header, sizeof header);
}

/* ---- Statements: Herald's, prepared once; every parameter and answer in binary. ---- */

typedef struct {
    const char *name;
    int count;
    Oid types[12];
    const char *sql;
} Statement;

static const Statement PARTITION = {"partition", 1, {TIMESTAMPTZ}, "SELECT herald_events_partition($1)"};
static const Statement EVENTS = {"events", 12,
    {TEXT_ARRAY, INT8_ARRAY, INT8_ARRAY, TEXT_ARRAY, TIMESTAMPTZ_ARRAY, TEXT_ARRAY, TEXT_ARRAY, TEXT_ARRAY, TEXT_ARRAY, BOOL_ARRAY,
     TIMESTAMPTZ_ARRAY, TEXT_ARRAY},
    "WITH input AS ("
    "  SELECT * FROM unnest($1::text[], $2::int8[], $3::int8[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::text[],"
    "                       $9::text[], $10::bool[], $11::timestamptz[], $12::text[])"
    "  AS t(id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, detail, test, received_at, language)),"
    "new AS ("
    "  INSERT INTO event_ids (app_id, id, received_at) SELECT app_id, id, received_at FROM input"
    "  ON CONFLICT DO NOTHING RETURNING app_id, id),"
    "stored AS ("
    "  INSERT INTO events (id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, detail, url, test,"
    "                      received_at, language)"
    "  SELECT i.id, i.app_id, i.campaign_id, i.type, i.occurred_at, i.day, i.platform, i.installation_id, i.detail, NULL::bytea, i.test,"
    "         i.received_at, i.language"
    "  FROM input i JOIN new n ON n.app_id = i.app_id AND n.id = i.id)"
    "SELECT app_id, id FROM new"};
static const Statement ROLLUPS = {"rollups", 7, {INT8_ARRAY, TEXT_ARRAY, TEXT_ARRAY, BOOL_ARRAY, TEXT_ARRAY, TEXT_ARRAY, INT8_ARRAY},
    "INSERT INTO event_rollups (campaign_id, day, platform, test, type, detail, count)"
    " SELECT * FROM unnest($1::int8[], $2::text[], $3::text[], $4::bool[], $5::text[], $6::text[], $7::int8[])"
    " ON CONFLICT (campaign_id, day, platform, test, type, detail) DO UPDATE SET count = event_rollups.count + excluded.count"};
static const Statement LANGUAGE_ROLLUPS = {"language_rollups", 6, {INT8_ARRAY, TEXT_ARRAY, BOOL_ARRAY, TEXT_ARRAY, TEXT_ARRAY, INT8_ARRAY},
    "INSERT INTO event_language_rollups (campaign_id, day, test, language, type, count)"
    " SELECT * FROM unnest($1::int8[], $2::text[], $3::bool[], $4::text[], $5::text[], $6::int8[])"
    " ON CONFLICT (campaign_id, day, test, language, type) DO UPDATE SET count = event_language_rollups.count + excluded.count"};
static const Statement LOCKS = {"locks", 1, {TEXT_ARRAY},
    "SELECT pg_advisory_xact_lock(hashtextextended(key, 0)) FROM unnest($1::text[]) AS key"};
static const Statement NUMBERS = {"numbers", 2, {INT8, TEXT_ARRAY},
    "SELECT installation_id, number FROM device_numbers WHERE app_id = $1 AND installation_id = ANY($2::text[])"};
static const Statement NEXT_NUMBER = {"next_number", 1, {INT8}, "SELECT next_number FROM device_number_counters WHERE app_id = $1"};
static const Statement ADD_NUMBERS = {"add_numbers", 3, {INT8_ARRAY, TEXT_ARRAY, INT8_ARRAY},
    "INSERT INTO device_numbers (app_id, installation_id, number) SELECT * FROM unnest($1::int8[], $2::text[], $3::int8[])"};
static const Statement SET_NEXT_NUMBER = {"set_next_number", 2, {INT8, INT8},
    "INSERT INTO device_number_counters (app_id, next_number) VALUES ($1, $2)"
    " ON CONFLICT (app_id) DO UPDATE SET next_number = excluded.next_number"};
static const Statement READ_CHUNKS = {"read_chunks", 5, {INT8_ARRAY, BOOL_ARRAY, TEXT_ARRAY, TEXT_ARRAY, INT8_ARRAY},
    "SELECT campaign_id, test, kind, day, chunk, bits FROM device_bitmaps"
    " WHERE (campaign_id, test, kind, day, chunk) IN (SELECT * FROM unnest($1::int8[], $2::bool[], $3::text[], $4::text[], $5::int8[]))"};
static const Statement WRITE_CHUNKS = {"write_chunks", 6, {INT8_ARRAY, BOOL_ARRAY, TEXT_ARRAY, TEXT_ARRAY, INT8_ARRAY, BYTEA_ARRAY},
    "INSERT INTO device_bitmaps (campaign_id, test, kind, day, chunk, bits)"
    " SELECT * FROM unnest($1::int8[], $2::bool[], $3::text[], $4::text[], $5::int8[], $6::bytea[])"
    " ON CONFLICT (campaign_id, test, kind, day, chunk) DO UPDATE SET bits = excluded.bits"};
static const Statement READ_SKETCHES = {"read_sketches", 4, {INT8_ARRAY, BOOL_ARRAY, TEXT_ARRAY, TEXT_ARRAY},
    "SELECT campaign_id, test, kind, day, chunks, registers FROM device_sketches"
    " WHERE (campaign_id, test, kind, day) IN (SELECT * FROM unnest($1::int8[], $2::bool[], $3::text[], $4::text[]))"};
static const Statement WRITE_SKETCHES = {"write_sketches", 6, {INT8_ARRAY, BOOL_ARRAY, TEXT_ARRAY, TEXT_ARRAY, INT8_ARRAY, BYTEA_ARRAY},
    "INSERT INTO device_sketches (campaign_id, test, kind, day, chunks, registers)"
    " SELECT * FROM unnest($1::int8[], $2::bool[], $3::text[], $4::text[], $5::int8[], $6::bytea[])"
    " ON CONFLICT (campaign_id, test, kind, day) DO UPDATE SET chunks = excluded.chunks, registers = excluded.registers"};
static const Statement READ_WEEK_SKETCHES = {"read_week_sketches", 4, {INT8_ARRAY, BOOL_ARRAY, TEXT_ARRAY, TEXT_ARRAY},
    "SELECT campaign_id, test, kind, week, chunks, registers FROM device_week_sketches"
    " WHERE (campaign_id, test, kind, week) IN (SELECT * FROM unnest($1::int8[], $2::bool[], $3::text[], $4::text[]))"};
static const Statement WRITE_WEEK_SKETCHES = {"write_week_sketches", 6, {INT8_ARRAY, BOOL_ARRAY, TEXT_ARRAY, TEXT_ARRAY, INT8_ARRAY, BYTEA_ARRAY},
    "INSERT INTO device_week_sketches (campaign_id, test, kind, week, chunks, registers)"
    " SELECT * FROM unnest($1::int8[], $2::bool[], $3::text[], $4::text[], $5::int8[], $6::bytea[])"
    " ON CONFLICT (campaign_id, test, kind, week) DO UPDATE SET chunks = excluded.chunks, registers = excluded.registers"};

static void prepare(PGconn *db, const Statement *statement) {
    PGresult *result = PQprepare(db, statement->name, statement->sql, statement->count, statement->types);
    if (PQresultStatus(result) != PGRES_COMMAND_OK) fail(db, statement->sql);
    PQclear(result);
}

/* Runs a prepared statement with binary parameters; the caller clears the answer. */
static PGresult *run(PGconn *db, const Statement *statement, const char *const *values, const int *lengths) {
    static const int binary[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    PGresult *result = PQexecPrepared(db, statement->name, statement->count, values, lengths, binary, 1);
    ExecStatusType status = PQresultStatus(result);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) fail(db, statement->name);
    return result;
}

/* Runs a statement whose parameters are all arrays. */
static PGresult *run_arrays(PGconn *db, const Statement *statement, Array *arrays) {
    const char *values[12];
    int lengths[12];
    for (int index = 0; index < statement->count; index++) {
        finish(&arrays[index]);
        values[index] = arrays[index].bytes;
        lengths[index] = arrays[index].length;
    }
    return run(db, statement, values, lengths);
}

static void execute(PGconn *db, const char *sql) {
    PGresult *result = PQexec(db, sql);
    if (PQresultStatus(result) != PGRES_COMMAND_OK) fail(db, sql);
    PQclear(result);
}

static long long int8_at(const PGresult *result, int row, int column) {
    uint64_t big;
    memcpy(&big, PQgetvalue(result, row, column), 8);
    return (long long)be64toh(big);
}

/* ---- Orders: Herald's key orders, so that locks and rows go in the order its statements take them. ---- */

static int numbers(long long left, long long right) { return (left > right) - (left < right); }

static int strings(const char *left, const char *right) { return strcmp(left ? left : "", right ? right : ""); }

static int by_id(const void *a, const void *b) {
    const Row *left = *(Row *const *)a, *right = *(Row *const *)b;
    int order = numbers(left->app, right->app);
    return order ? order : strcmp(left->id, right->id);
}

static int by_id_then_arrival(const void *a, const void *b) {
    int order = by_id(a, b);
    return order ? order : numbers((*(Row *const *)a)->arrival, (*(Row *const *)b)->arrival);
}

static int by_rollup(const void *a, const void *b) {
    const Row *left = *(Row *const *)a, *right = *(Row *const *)b;
    int order = numbers(left->campaign, right->campaign);
    if (!order) order = strcmp(left->day, right->day);
    if (!order) order = strcmp(left->platform, right->platform);
    if (!order) order = numbers(left->test, right->test);
    if (!order) order = strcmp(left->type, right->type);
    return order ? order : strcmp(left->detail, right->detail);
}

/* The default version (no language) is keyed '', as Herald keys it. */
static int by_language_rollup(const void *a, const void *b) {
    const Row *left = *(Row *const *)a, *right = *(Row *const *)b;
    int order = numbers(left->campaign, right->campaign);
    if (!order) order = strcmp(left->day, right->day);
    if (!order) order = numbers(left->test, right->test);
    if (!order) order = strings(left->language, right->language);
    return order ? order : strcmp(left->type, right->type);
}

static int by_installation(const void *a, const void *b) {
    const Row *left = *(Row *const *)a, *right = *(Row *const *)b;
    int order = numbers(left->app, right->app);
    return order ? order : strcmp(left->installation, right->installation);
}

static int by_installation_then_arrival(const void *a, const void *b) {
    int order = by_installation(a, b);
    return order ? order : numbers((*(Row *const *)a)->arrival, (*(Row *const *)b)->arrival);
}

static int by_arrival(const void *a, const void *b) {
    return numbers((*(Row *const *)a)->arrival, (*(Row *const *)b)->arrival);
}

/* A campaign's day of one kind of devices (chunk 0), or one chunk of those devices on that day. */
typedef struct {
    long long campaign;
    int test;
    const char *kind;
    const char *day;
    long long chunk;
} Key;

static int by_day(const Key *left, const Key *right) {
    int order = numbers(left->campaign, right->campaign);
    if (!order) order = numbers(left->test, right->test);
    if (!order) order = strcmp(left->kind, right->kind);
    return order ? order : strcmp(left->day, right->day);
}

static int by_chunk(const void *a, const void *b) {
    const Key *left = a, *right = b;
    int order = by_day(left, right);
    return order ? order : numbers(left->chunk, right->chunk);
}

static int by_day_key(const void *a, const void *b) { return by_day(a, b); }

/* ---- Device bitmaps and sketches, as DeviceBitmaps.record and DeviceSketches.record write them. ---- */

typedef struct {
    Key key; /* first, so a Key finds it with bsearch */
    Row *row;
    int offset;
} Sighting;

static int by_sighting(const void *a, const void *b) {
    const Sighting *left = a, *right = b;
    int order = by_chunk(&left->key, &right->key);
    return order ? order : numbers(left->row->arrival, right->row->arrival);
}

typedef struct {
    Key key;
    int first, count, stored; /* its sightings */
    unsigned char bits[CHUNK_BYTES];
} Chunk;

/* A sketch row, a day's or a week's (its key's day the Monday): what is stored, and the chunk rows the batch adds. */
typedef struct {
    Key key; /* first, so a Key finds it (and what it begins) with bsearch */
    int stored, new_chunks;
    long long chunks;
    unsigned char registers[REGISTERS];
} Sketch;

typedef struct {
    Sketch sketch;
    int first, count; /* its devices new to its bitmaps, in `added` */
    char monday[11]; /* its week's */
} Day;

/* A campaign's week: its days in `days`, from `first`, `count` of them. */
typedef struct {
    Sketch sketch;
    int first, count;
} Week;

/* The Monday of a YYYY-MM-DD day, into `monday` (DeviceSketches.monday, with Howard Hinnant's days_from_civil
 * and civil_from_days). */
static void monday_of(const char *day, char monday[11]) {
    int year = atoi(day), month = atoi(day + 5), date = atoi(day + 8);
    int shifted = month <= 2 ? year - 1 : year;
    int era = (shifted >= 0 ? shifted : shifted - 399) / 400, year_of_era = shifted - era * 400;
    int day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + date - 1;
    long long days = era * 146097LL + year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year - 719468;
    days -= ((days % 7) + 7 + 3) % 7; /* 1970-01-01, day 0, was a Thursday */
    long long shifted_days = days + 719468;
    long long day_era = (shifted_days >= 0 ? shifted_days : shifted_days - 146096) / 146097;
    long long day_of_era = shifted_days - day_era * 146097;
    long long era_year = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    long long year_day = day_of_era - (365 * era_year + era_year / 4 - era_year / 100);
    long long month_index = (5 * year_day + 2) / 153;
    int result_day = (int)(year_day - (153 * month_index + 2) / 5 + 1), result_month = (int)(month_index < 10 ? month_index + 3 : month_index - 9);
    char text[40]; /* room for any year, though stored days have four digits */
    snprintf(text, sizeof text, "%04lld-%02d-%02d", era_year + day_era * 400 + (result_month <= 2), result_month, result_day);
    snprintf(monday, 11, "%.10s", text);
}

/* SplitMix64's finalizer over the app and the device number (DeviceSketch.hash). */
static uint64_t sketch_hash(long long app, long long number) {
    uint64_t value = (uint64_t)app * 0x9E3779B97F4A7C15ull ^ (uint64_t)number;
    value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ull;
    value = (value ^ (value >> 27)) * 0x94D049BB133111EBull;
    return value ^ (value >> 31);
}

/* Adds a device to a day's registers; answers whether one rose (DeviceSketch.insert). */
static int sketch_insert(unsigned char *registers, long long app, long long number) {
    uint64_t hash = sketch_hash(app, number);
    int index = (int)(hash >> (64 - PRECISION));
    int rank = __builtin_clzll(hash << PRECISION | 1ull << (PRECISION - 1)) + 1;
    if (rank <= registers[index]) return 0;
    registers[index] = (unsigned char)rank;
    return 1;
}

static Array arrays[12];

/* Starts the six arrays a write of bitmap chunks or sketches sends: campaign, test flag, kind, day, chunk or
 * chunk count, bytes. */
static void start_writes(void) {
    start(&arrays[0], INT8);
    start(&arrays[1], BOOL);
    start(&arrays[2], TEXT);
    start(&arrays[3], TEXT);
    start(&arrays[4], INT8);
    start(&arrays[5], BYTEA);
}

/* A stored row's kind as the binary's own constant (a Key's kind is compared, never freed). */
static const char *kind_named(const char *stored) {
    static const char *const kinds[] = {"converted", "exposed", "seen"};
    for (int index = 0; index < 3; index++) if (!strcmp(stored, kinds[index])) return kinds[index];
    return "";
}

/* Reads the stored rows of `count` sketches (in key order, each `size` bytes from the last) with `statement`. */
static void read_sketches(PGconn *db, const Statement *statement, char *sketches, int count, size_t size) {
    start(&arrays[0], INT8);
    start(&arrays[1], BOOL);
    start(&arrays[2], TEXT);
    start(&arrays[3], TEXT);
    for (int index = 0; index < count; index++) {
        Sketch *sketch = (Sketch *)(sketches + index * size);
        add_int8(&arrays[0], sketch->key.campaign);
        add_bool(&arrays[1], sketch->key.test);
        add_text(&arrays[2], sketch->key.kind);
        add_text(&arrays[3], sketch->key.day);
        memset(sketch->registers, 0, REGISTERS);
    }
    PGresult *result = run_arrays(db, statement, arrays);
    for (int row = 0; row < PQntuples(result); row++) {
        Key key = {int8_at(result, row, 0), *PQgetvalue(result, row, 1) != 0, kind_named(PQgetvalue(result, row, 2)), PQgetvalue(result, row, 3), 0};
        Sketch *found = bsearch(&key, sketches, count, size, by_day_key);
        if (!found) continue;
        int length = PQgetlength(result, row, 5);
        memcpy(found->registers, PQgetvalue(result, row, 5), length < REGISTERS ? length : REGISTERS);
        found->chunks = int8_at(result, row, 4);
        found->stored = 1;
    }
    PQclear(result);
}

/* Adds a changed sketch to the rows its write statement sends (after start_writes). */
static void add_sketch_row(const Sketch *sketch) {
    long long total = sketch->chunks + sketch->new_chunks;
    add_int8(&arrays[0], sketch->key.campaign);
    add_bool(&arrays[1], sketch->key.test);
    add_text(&arrays[2], sketch->key.kind);
    add_text(&arrays[3], sketch->key.day);
    add_int8(&arrays[4], total > 0 ? total : 0);
    add(&arrays[5], sketch->registers, REGISTERS);
}

/* Takes each lock named in `keys` until the transaction ends: one statement for all of them. */
static void lock(PGconn *db, char keys[][96], int count) {
    start(&arrays[0], TEXT);
    for (int index = 0; index < count; index++) add_text(&arrays[0], keys[index]);
    PQclear(run_arrays(db, &LOCKS, arrays));
}

/* Sets the numbers stored for `count` installations of one app (sorted by installation). */
static void look_up_numbers(PGconn *db, Row **installations, int count) {
    start(&arrays[1], TEXT);
    for (int index = 0; index < count; index++) add_text(&arrays[1], installations[index]->installation);
    finish(&arrays[1]);
    uint64_t app = htobe64((uint64_t)installations[0]->app);
    const char *values[2] = {(const char *)&app, arrays[1].bytes};
    int lengths[2] = {8, arrays[1].length};
    PGresult *result = run(db, &NUMBERS, values, lengths);
    for (int row = 0; row < PQntuples(result); row++) {
        Row probe = {.app = installations[0]->app, .installation = PQgetvalue(result, row, 0)}, *key = &probe;
        Row **found = bsearch(&key, installations, count, sizeof *installations, by_installation);
        if (found) (*found)->number = int8_at(result, row, 1);
    }
    PQclear(result);
}

/* Looks up each app's installations in `distinct` (sorted by app and installation), one statement an app. */
static void look_up_all(PGconn *db, Row **distinct, int count) {
    for (int first = 0; first < count;) {
        int end = first + 1;
        while (end < count && distinct[end]->app == distinct[first]->app) end++;
        look_up_numbers(db, distinct + first, end - first);
        first = end;
    }
}

/* Each sighting's installation numbered: looked up, and those without one numbered from their app's
 * counter under the app's lock, in the order they arrived (DeviceBitmaps.numbers). */
static void number_installations(PGconn *db, Row **sightings, int count) {
    static Row *distinct[BATCH], *unnumbered[BATCH];
    static char keys[BATCH][96];
    memcpy(distinct, sightings, count * sizeof *distinct);
    qsort(distinct, count, sizeof *distinct, by_installation_then_arrival);
    int unique = 0;
    for (int index = 0; index < count; index++) {
        if (unique && by_installation(&distinct[unique - 1], &distinct[index]) == 0) continue;
        distinct[unique] = distinct[index];
        distinct[unique++]->number = -1;
    }
    look_up_all(db, distinct, unique);
    int missing = 0, apps = 0;
    for (int index = 0; index < unique; index++) {
        if (distinct[index]->number >= 0) continue;
        if (!missing || unnumbered[missing - 1]->app != distinct[index]->app) snprintf(keys[apps++], sizeof keys[0], "herald.device_numbers.%lld", distinct[index]->app);
        unnumbered[missing++] = distinct[index];
    }
    if (missing) {
        /* Another writer may have numbered some of them before this one held the apps' locks. */
        lock(db, keys, apps);
        look_up_all(db, unnumbered, missing);
        int still = 0;
        for (int index = 0; index < missing; index++) if (unnumbered[index]->number < 0) unnumbered[still++] = unnumbered[index];
        qsort(unnumbered, still, sizeof *unnumbered, by_arrival);
        long long counter_apps[BATCH], counters[BATCH];
        int counted = 0;
        start(&arrays[0], INT8);
        start(&arrays[1], TEXT);
        start(&arrays[2], INT8);
        for (int index = 0; index < still; index++) {
            Row *row = unnumbered[index];
            int slot = 0;
            while (slot < counted && counter_apps[slot] != row->app) slot++;
            if (slot == counted) {
                uint64_t app = htobe64((uint64_t)row->app);
                const char *values[1] = {(const char *)&app};
                int lengths[1] = {8};
                PGresult *result = run(db, &NEXT_NUMBER, values, lengths);
                counter_apps[counted] = row->app;
                counters[counted++] = PQntuples(result) ? int8_at(result, 0, 0) : 0;
                PQclear(result);
            }
            row->number = counters[slot]++;
            add_int8(&arrays[0], row->app);
            add_text(&arrays[1], row->installation);
            add_int8(&arrays[2], row->number);
        }
        if (still) PQclear(run_arrays(db, &ADD_NUMBERS, arrays));
        /* The counters in app order (apps are few: a sort by insertion is enough). */
        for (int index = 1; index < counted; index++) {
            for (int slot = index; slot > 0 && counter_apps[slot - 1] > counter_apps[slot]; slot--) {
                long long app = counter_apps[slot], next = counters[slot];
                counter_apps[slot] = counter_apps[slot - 1], counters[slot] = counters[slot - 1];
                counter_apps[slot - 1] = app, counters[slot - 1] = next;
            }
        }
        for (int slot = 0; slot < counted; slot++) {
            uint64_t app = htobe64((uint64_t)counter_apps[slot]), next = htobe64((uint64_t)counters[slot]);
            const char *values[2] = {(const char *)&app, (const char *)&next};
            int lengths[2] = {8, 8};
            PQclear(run(db, &SET_NEXT_NUMBER, values, lengths));
        }
    }
    for (int index = 0; index < count; index++) {
        Row **found = bsearch(&sightings[index], distinct, unique, sizeof *distinct, by_installation);
        sightings[index]->number = (*found)->number;
    }
}

/* The batch's new events with an installation: numbered, their bits set in their campaign day's chunks of
 * each kind (`seen`, and `exposed` or `converted` by type), and the devices new to a day's bitmaps added to
 * its sketch (DeviceBitmaps.record, DeviceSketches.record). */
static void record_devices(PGconn *db, Row **seen, int rows) {
    static Sighting sightings[2 * BATCH];
    static Chunk chunks[2 * BATCH];
    static Day days[2 * BATCH];
    static Week weeks[2 * BATCH];
    static long long added_apps[2 * BATCH], added_numbers[2 * BATCH];
    static char keys[4 * BATCH][96];
    number_installations(db, seen, rows);
    int count = 0;
    for (int index = 0; index < rows; index++) {
        Row *row = seen[index];
        const char *own = !strcmp(row->type, "impression") ? "exposed" : !strcmp(row->type, "conversion") ? "converted" : NULL;
        const char *kinds[2] = {"seen", own};
        for (int kind = 0; kind < 2 && kinds[kind]; kind++) {
            sightings[count++] = (Sighting){
                {row->campaign, row->test, kinds[kind], row->day, row->number / CHUNK_BITS}, row, (int)(row->number % CHUNK_BITS)};
        }
    }
    qsort(sightings, count, sizeof *sightings, by_sighting);
    int chunk_count = 0, day_count = 0;
    for (int index = 0; index < count; index++) {
        if (chunk_count && by_chunk(&chunks[chunk_count - 1].key, &sightings[index].key) == 0) {
            chunks[chunk_count - 1].count++;
            continue;
        }
        chunks[chunk_count++] = (Chunk){.key = sightings[index].key, .first = index, .count = 1};
        if (day_count && by_day(&days[day_count - 1].sketch.key, &sightings[index].key) == 0) continue;
        days[day_count] = (Day){.sketch.key = sightings[index].key};
        days[day_count].sketch.key.chunk = 0;
        monday_of(sightings[index].key.day, days[day_count].monday);
        snprintf(keys[day_count++], sizeof keys[0], "herald.devices.%lld.%s.%s.%s", sightings[index].key.campaign,
                 sightings[index].key.test ? "true" : "false", sightings[index].key.kind, sightings[index].key.day);
    }
    /* Then the days' weeks, in key order: the days are in key order, so a campaign's weeks follow each other. */
    int lock_count = day_count, week_count = 0;
    for (int index = 0; index < day_count; index++) {
        Key week = {days[index].sketch.key.campaign, days[index].sketch.key.test, days[index].sketch.key.kind, days[index].monday, 0};
        if (week_count && by_day(&weeks[week_count - 1].sketch.key, &week) == 0) continue;
        weeks[week_count++].sketch.key = week;
        snprintf(keys[lock_count++], sizeof keys[0], "herald.device_weeks.%lld.%s.%s.%s", week.campaign, week.test ? "true" : "false",
                 week.kind, week.day);
    }
    lock(db, keys, lock_count);

    start(&arrays[0], INT8);
    start(&arrays[1], BOOL);
    start(&arrays[2], TEXT);
    start(&arrays[3], TEXT);
    start(&arrays[4], INT8);
    for (int index = 0; index < chunk_count; index++) {
        add_int8(&arrays[0], chunks[index].key.campaign);
        add_bool(&arrays[1], chunks[index].key.test);
        add_text(&arrays[2], chunks[index].key.kind);
        add_text(&arrays[3], chunks[index].key.day);
        add_int8(&arrays[4], chunks[index].key.chunk);
    }
    PGresult *result = run_arrays(db, &READ_CHUNKS, arrays);
    for (int row = 0; row < PQntuples(result); row++) {
        Key key = {int8_at(result, row, 0), *PQgetvalue(result, row, 1) != 0, kind_named(PQgetvalue(result, row, 2)), PQgetvalue(result, row, 3),
                   int8_at(result, row, 4)};
        Chunk *chunk = bsearch(&key, chunks, chunk_count, sizeof *chunks, by_chunk);
        if (!chunk) continue;
        int length = PQgetlength(result, row, 5);
        memcpy(chunk->bits, PQgetvalue(result, row, 5), length < CHUNK_BYTES ? length : CHUNK_BYTES);
        chunk->stored = 1;
    }
    PQclear(result);

    /* Set each chunk's bits; a device new to a day's bitmaps is new to its sketch. */
    start_writes();
    int added = 0, day = 0;
    for (int index = 0; index < chunk_count; index++) {
        Chunk *chunk = &chunks[index];
        while (by_day(&days[day].sketch.key, &chunk->key) != 0) days[++day].first = added;
        int before = added;
        for (int at = chunk->first; at < chunk->first + chunk->count; at++) {
            int offset = sightings[at].offset;
            unsigned char mask = (unsigned char)(1u << (offset % 8));
            if (chunk->bits[offset / 8] & mask) continue;
            chunk->bits[offset / 8] |= mask;
            added_apps[added] = sightings[at].row->app;
            added_numbers[added++] = chunk->key.chunk * CHUNK_BITS + offset;
        }
        if (added == before) continue;
        days[day].count += added - before;
        if (!chunk->stored) days[day].sketch.new_chunks++;
        add_int8(&arrays[0], chunk->key.campaign);
        add_bool(&arrays[1], chunk->key.test);
        add_text(&arrays[2], chunk->key.kind);
        add_text(&arrays[3], chunk->key.day);
        add_int8(&arrays[4], chunk->key.chunk);
        add(&arrays[5], chunk->bits, CHUNK_BYTES);
    }
    if (arrays[0].count) PQclear(run_arrays(db, &WRITE_CHUNKS, arrays));

    /* The days with devices new to them: their sketches read, raised, written. */
    int sketched = 0;
    for (int index = 0; index < day_count; index++) if (days[index].count) days[sketched++] = days[index];
    if (!sketched) return;
    read_sketches(db, &READ_SKETCHES, (char *)days, sketched, sizeof *days);
    start_writes();
    for (int index = 0; index < sketched; index++) {
        Day *found = &days[index];
        int changed = found->sketch.new_chunks != 0 || !found->sketch.stored;
        for (int at = found->first; at < found->first + found->count; at++) {
            changed |= sketch_insert(found->sketch.registers, added_apps[at], added_numbers[at]);
        }
        if (changed) add_sketch_row(&found->sketch);
    }
    if (arrays[0].count) PQclear(run_arrays(db, &WRITE_SKETCHES, arrays));

    /* Their weeks get what they got: the same devices raise the week's registers, its chunk count adds theirs. */
    week_count = 0;
    for (int index = 0; index < sketched; index++) {
        Key week = {days[index].sketch.key.campaign, days[index].sketch.key.test, days[index].sketch.key.kind, days[index].monday, 0};
        if (week_count && by_day(&weeks[week_count - 1].sketch.key, &week) == 0) {
            weeks[week_count - 1].count++;
            continue;
        }
        weeks[week_count++] = (Week){.sketch.key = week, .first = index, .count = 1};
    }
    read_sketches(db, &READ_WEEK_SKETCHES, (char *)weeks, week_count, sizeof *weeks);
    start_writes();
    for (int index = 0; index < week_count; index++) {
        Week *found = &weeks[index];
        for (int day = found->first; day < found->first + found->count; day++) found->sketch.new_chunks += days[day].sketch.new_chunks;
        int changed = found->sketch.new_chunks != 0 || !found->sketch.stored;
        for (int day = found->first; day < found->first + found->count; day++) {
            for (int at = days[day].first; at < days[day].first + days[day].count; at++) {
                changed |= sketch_insert(found->sketch.registers, added_apps[at], added_numbers[at]);
            }
        }
        if (changed) add_sketch_row(&found->sketch);
    }
    if (arrays[0].count) PQclear(run_arrays(db, &WRITE_WEEK_SKETCHES, arrays));
}

/* One upsert of the rollup counts of `rows` (sorted by `order`), one element per distinct key. */
static void add_rollups(PGconn *db, Row **rows, int count, int (*order)(const void *, const void *), int languages) {
    qsort(rows, count, sizeof *rows, order);
    for (int index = 0; index < 7; index++) start(&arrays[index], TEXT);
    arrays[0].element = INT8;
    arrays[languages ? 2 : 3].element = BOOL;
    arrays[languages ? 5 : 6].element = INT8;
    for (int first = 0; first < count;) {
        int end = first + 1;
        while (end < count && order(&rows[first], &rows[end]) == 0) end++;
        const Row *row = rows[first];
        add_int8(&arrays[0], row->campaign);
        add_text(&arrays[1], row->day);
        if (languages) {
            add_bool(&arrays[2], row->test);
            add_text(&arrays[3], row->language ? row->language : "");
            add_text(&arrays[4], row->type);
            add_int8(&arrays[5], end - first);
        } else {
            add_text(&arrays[2], row->platform);
            add_bool(&arrays[3], row->test);
            add_text(&arrays[4], row->type);
            add_text(&arrays[5], row->detail);
            add_int8(&arrays[6], end - first);
        }
        first = end;
    }
    if (count) PQclear(run_arrays(db, languages ? &LANGUAGE_ROLLUPS : &ROLLUPS, arrays));
}

/* One batch in one transaction, received at `received`; answers how many of its events were new. */
static int write_batch(PGconn *db, Row *rows, int count, long long received) {
    static Row *order[BATCH], *fresh[BATCH], *seen[BATCH];
    for (int index = 0; index < count; index++) {
        order[index] = &rows[index];
        rows[index].arrival = index;
        rows[index].stored = 0;
    }
    /* The first of each id, in key order (a later one in the batch is a duplicate). */
    qsort(order, count, sizeof *order, by_id_then_arrival);
    int unique = 0;
    for (int index = 0; index < count; index++) {
        if (!unique || by_id(&order[unique - 1], &order[index]) != 0) order[unique++] = order[index];
    }
    execute(db, "BEGIN");
    for (int index = 0; index < 12; index++) start(&arrays[index], TEXT);
    arrays[1].element = arrays[2].element = INT8;
    arrays[4].element = arrays[10].element = TIMESTAMPTZ;
    arrays[9].element = BOOL;
    for (int index = 0; index < unique; index++) {
        const Row *row = order[index];
        add_text(&arrays[0], row->id);
        add_int8(&arrays[1], row->app);
        add_int8(&arrays[2], row->campaign);
        add_text(&arrays[3], row->type);
        add_int8(&arrays[4], row->occurred);
        add_text(&arrays[5], row->day);
        add_text(&arrays[6], row->platform);
        add_text(&arrays[7], row->installation);
        add_text(&arrays[8], row->detail);
        add_bool(&arrays[9], row->test);
        add_int8(&arrays[10], received);
        add_text(&arrays[11], row->language);
    }
    PGresult *result = run_arrays(db, &EVENTS, arrays);
    for (int row = 0; row < PQntuples(result); row++) {
        Row probe = {.app = int8_at(result, row, 0), .id = PQgetvalue(result, row, 1)}, *key = &probe;
        Row **found = bsearch(&key, order, unique, sizeof *order, by_id);
        if (found) (*found)->stored = 1;
    }
    PQclear(result);

    int stored = 0, devices = 0;
    for (int index = 0; index < count; index++) {
        if (!rows[index].stored) continue;
        fresh[stored++] = &rows[index];
        if (rows[index].installation) seen[devices++] = &rows[index];
    }
    add_rollups(db, fresh, stored, by_rollup, 0);
    add_rollups(db, fresh, stored, by_language_rollup, 1);
    if (devices) record_devices(db, seen, devices);
    execute(db, "COMMIT");
    return stored;
}

/* ---- Reading the rows, timing, the figures. ---- */

static long long timestamp(const char *text) {
    struct tm fields = {0};
    int milliseconds = 0;
    if (sscanf(text, "%d-%d-%d %d:%d:%d.%d", &fields.tm_year, &fields.tm_mon, &fields.tm_mday, &fields.tm_hour, &fields.tm_min,
               &fields.tm_sec, &milliseconds) < 6) {
        fprintf(stderr, "not a time: %s\n", text);
        exit(1);
    }
    fields.tm_year -= 1900;
    fields.tm_mon -= 1;
    return ((long long)timegm(&fields) - POSTGRES_EPOCH) * 1000000 + milliseconds * 1000LL;
}

/* Waits for a line, or the end, on the standard input. */
static void wait_for_line(void) {
    for (int c = getchar(); c != EOF && c != '\n'; c = getchar()) {}
}

/* A server setting as the session has it. */
static char *setting(PGconn *db, const char *name) {
    char sql[64];
    snprintf(sql, sizeof sql, "SHOW %s", name);
    PGresult *result = PQexec(db, sql);
    if (PQresultStatus(result) != PGRES_TUPLES_OK) fail(db, sql);
    char *value = strdup(PQgetvalue(result, 0, 0));
    PQclear(result);
    return value;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s CONNINFO ROWS.tsv\n", argv[0]);
        return 2;
    }
    size_t count;
    char **fields = read_event_rows(argv[2], &count);
    Row *rows = malloc((count ? count : 1) * sizeof *rows);
    for (size_t index = 0; index < count; index++) {
        char **field = fields + index * FIELDS;
        rows[index] = (Row){
            .id = field[ID], .type = field[TYPE], .day = field[DAY], .platform = field[PLATFORM],
            .installation = *field[INSTALLATION] ? field[INSTALLATION] : NULL, .detail = field[DETAIL],
            .language = *field[LANGUAGE] ? field[LANGUAGE] : NULL, .app = atoll(field[APP]), .campaign = atoll(field[CAMPAIGN]),
            .occurred = timestamp(field[OCCURRED]), .test = atoi(field[TEST])};
    }

    PGconn *db = PQconnectdb(argv[1]);
    if (PQstatus(db) != CONNECTION_OK) fail(db, "connecting");
    char *synchronous_commit = setting(db, "synchronous_commit"), *fsync = setting(db, "fsync");
    execute(db, "SET plan_cache_mode = force_custom_plan");
    const Statement *statements[] = {&PARTITION, &EVENTS, &ROLLUPS, &LANGUAGE_ROLLUPS, &LOCKS, &NUMBERS, &NEXT_NUMBER, &ADD_NUMBERS,
                                     &SET_NEXT_NUMBER, &READ_CHUNKS, &WRITE_CHUNKS, &READ_SKETCHES, &WRITE_SKETCHES,
                                     &READ_WEEK_SKETCHES, &WRITE_WEEK_SKETCHES};
    for (size_t index = 0; index < sizeof statements / sizeof *statements; index++) prepare(db, statements[index]);
    printf("ready\n");
    fflush(stdout);
    wait_for_line();

    size_t batches = (count + BATCH - 1) / BATCH, stored = 0;
    double *latencies = malloc((batches ? batches : 1) * sizeof *latencies);
    int month = -1; /* the month whose partition this process has made, as year * 12 + month */
    double started = now(CLOCK_MONOTONIC), cpu_started = now(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t batch = 0; batch < batches; batch++) {
        double batch_started = now(CLOCK_MONOTONIC);
        long long milliseconds = (long long)(now(CLOCK_REALTIME) * 1000 + 0.5);
        long long received = (milliseconds - POSTGRES_EPOCH * 1000) * 1000;
        time_t seconds = (time_t)(milliseconds / 1000);
        struct tm utc;
        gmtime_r(&seconds, &utc);
        if (utc.tm_year * 12 + utc.tm_mon != month) {
            uint64_t big = htobe64((uint64_t)received);
            const char *values[1] = {(const char *)&big};
            int lengths[1] = {8};
            PQclear(run(db, &PARTITION, values, lengths));
            month = utc.tm_year * 12 + utc.tm_mon;
        }
        size_t first = batch * BATCH;
        stored += write_batch(db, rows + first, (int)(count - first < BATCH ? count - first : BATCH), received);
        latencies[batch] = (now(CLOCK_MONOTONIC) - batch_started) * 1000;
    }
    double seconds = now(CLOCK_MONOTONIC) - started, cpu_seconds = now(CLOCK_PROCESS_CPUTIME_ID) - cpu_started;
    printf("events=%zu stored=%zu seconds=%.3f cpu_seconds=%.3f batch_p50_ms=%.2f batch_p99_ms=%.2f synchronous_commit=%s fsync=%s\n",
           count, stored, seconds, cpu_seconds, percentile(latencies, batches, 0.5), percentile(latencies, batches, 0.99),
           synchronous_commit, fsync);
    fflush(stdout);
    wait_for_line();
    PQfinish(db);
    return 0;
}
