#!/usr/bin/env python3
"""The stats endpoint and the report pages at 10 M and 100 M raw events, on PostgreSQL (or SQLite with
`--engine sqlite`): the scale issue's "under 10 ms server time p99 at 100 million events, generated
straight into the tables".

Setup through Herald as shipped: `herald user create`, `app create`, `key create` and `--campaigns`
published campaigns made through the API of a server on a temporary SQLite file. Each campaign's device
bitmaps for `--days` UTC days ending today are written into that file as bench/devices.py writes them
(each device of a population of 4 × `--devices` seen on a day with probability 1/4; the second campaign
gets a hundredth of that, so its range stays under 1024 chunk rows and is counted exactly, the others
past 1024 are estimated from sketches), and Herald's migration 0017 is undone and applied again to make
the days' device sketches (its HyperLogLog, its hash: not reimplemented here). The app's device numbers
(`d-<n>` is number n) are written beside. On PostgreSQL, `herald copy` then moves the whole installation
into an empty database of Debian's PostgreSQL, started in a temporary folder by bench/postgres.py's
`Postgres` (512 MB of shared buffers, default durability).

Raw events are generated straight into the tables, in steps up to each of `--events` in total (default
10 M, then 100 M), spread evenly over the days (received within them, occurred up to an hour before),
campaigns in turn; per event a type (3/5 impressions, 1/5 clicks 'primary', 1/5 dismissals 'auto'),
platform (2/3 ios), language (2/7 none, else one of five tags) and installation (`d-<n>` of the
population) from a hash of its number; ids are 36-character UUIDv7-like text (the milliseconds of its
receipt, then its number), unique in the app. On PostgreSQL each step:

* drops `events`' two indexes and `event_ids`' key and index, inserts the step's rows into `events` (its
  month partitions made by `herald_events_partition`) and `event_ids` with `generate_series`, from
  `--jobs` sessions at once (`synchronous_commit = off` in those sessions only), in statements of 5 M rows;
* `VACUUM (ANALYZE)` of both tables, so no autovacuum of the new rows runs while pages are measured;
* builds the four indexes again exactly as migrations/postgres/0004_events.sql defines them (checked
  against `pg_indexes` from before), `--jobs` at once with `maintenance_work_mem` 1 GB each;
* truncates the rollups and language rollups and derives them again from the raw rows with one scan
  (`GROUP BY`), then `VACUUM (ANALYZE)` of both, as autovacuum leaves the days before today; their
  totals, the events and the event ids are checked against the step's count.

For the load only, the server gets `max_wal_size` 4 GB and `checkpoint_timeout` 30 min (fewer
checkpoints while tens of GB are written) and autovacuum off (the load vacuums instead), all put back
before measuring. On SQLite the same rows go into `events` (no `event_ids` there) through a recursive
CTE, from one connection with `synchronous = OFF`, its index `events_by_received_at` dropped and made
again as migration 0012 makes it, and the rollups derived the same way.

Then Herald serves the database as shipped (release binary, `info` request log to a file) and answers
`--repeat` rounds (after `--warmup` rounds) of: the stats endpoint over the days for the first campaign
(estimated devices) and the second (counted), the campaign report over the days and with its 30-day
default, and `/reports` over the days, interleaved request by request. Server time is each request's own
line in Herald's request log (matched by `X-Request-Id`); client wall time beside it. Afterwards the
stats endpoint's impressions are checked against `count(*)` of the raw rows and its unique devices
against the bitmaps' true union (exact, or within 6 % when estimated). The raw rows never feed a report
(reports read the rollups, bitmaps and sketches), so the bitmaps are generated, not derived from them.

Run from the repository root (needs the release binary, `make build`):

    python3 bench/reports.py --events 10000000 100000000

On PostgreSQL 100 M events take about 42 GB of disk, with sort files and WAL about 55 GB at the peak
(checked before each step against the free space, from the previous step's bytes per event); `--keep`
keeps the temporary folder.

`--against OTHER_BINARY` serves that binary beside the built one, on the same database, and sends every
measured request to both in turn (which one first alternates by round): a before and after on which the
machine's drift falls alike. Its figures are the rows marked with the binary's file name."""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from common import BINARY, ROOT, BenchError, Client, Server, cli, percentile, sign_in
from devices import CHUNK_BITS, check_devices
from postgres import Postgres

EMAIL, PASSWORD = "bench@example.com", "bench password 1"
ROWS_PER_STATEMENT = 5_000_000  # one INSERT ... SELECT each: progress is said as each ends
LOG_LINE = re.compile(r"msg=request method=GET ms=(?P<ms>[0-9.]+) path=\S+ request_id=(?P<id>\S+) status=(?P<status>\d{3})")
# What each event's columns are made of, from its number n and h, a hash of n (Knuth's multiplicative).
HASH = "((n * 2654435761) % 4294967296)"
INSTALLATION = "((n * 2246822519) % 4294967296) % {population}"  # a second hash, so devices and types are independent
TYPES = [("impression", ""), ("impression", ""), ("impression", ""), ("click", "primary"), ("dismiss", "auto")]  # by (h >> 7) % 5
LANGUAGES = [None, None, "fa", "de", "ja", "ar", "pt-BR"]  # by (h >> 13) % 7
# The index builds' sort files (and SQLite's GROUP BY sorter) need about a fifth more of all events' share of the disk.
SORT_ROOM = 0.2


def say(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", flush=True)


def wait_for_binary(minutes: float = 10) -> None:
    """The release binary; while it is being rebuilt it may be missing for a while, so this waits for it."""
    deadline = time.monotonic() + minutes * 60
    while not BINARY.exists():
        if time.monotonic() > deadline:
            raise BenchError(f"{BINARY} is missing: build it with `make build`")
        time.sleep(5)


def sql_case(selector: str, values: list) -> str:
    """A CASE choosing values[selector] (selector in 0..len-1): works alike in SQLite and PostgreSQL."""
    def literal(value) -> str:
        return "NULL" if value is None else str(value) if isinstance(value, int) else "'" + value + "'"
    return f"CASE {selector} " + " ".join(f"WHEN {index} THEN {literal(value)}" for index, value in enumerate(values)) + " END"


def event_columns(app: int, campaigns: list[int], population: int) -> str:
    """The events' columns but times and id, over a subquery giving n and h."""
    return (f"{app}, {sql_case(f'n % {len(campaigns)}', campaigns)}, {sql_case('(h >> 7) % 5', [kind for kind, _ in TYPES])}, "
            f"{sql_case('(h >> 11) % 3', ['android', 'ios', 'ios'])}, 'd-' || {INSTALLATION.format(population=population)}, "
            f"{sql_case('(h >> 7) % 5', [detail for _, detail in TYPES])}, {sql_case('(h >> 13) % 7', LANGUAGES)}")


class PostgresEngine:
    """Herald's tables in PostgreSQL, filled by `herald copy` from the setup's SQLite file."""

    name = "PostgreSQL"
    # Disk an event takes until a step has measured it: 426 bytes measured at 5 M events (events 252 with
    # their two indexes, event_ids 174 with its key and index).
    bytes_per_event = 450
    wal_room = 6e9  # WAL on disk while loading: max_wal_size and a margin
    # The indexes a step drops before its bulk insert and builds again after, exactly as the migrations make them
    # (0004_events.sql, keyed by time from 0016_event_keys_by_occurrence.sql).
    indexes = [
        ("DROP INDEX events_by_key", "CREATE INDEX events_by_key ON events (app_id, occurred_at, id)"),
        ("DROP INDEX events_by_received_at", "CREATE INDEX events_by_received_at ON events (received_at)"),
        ("ALTER TABLE event_ids DROP CONSTRAINT event_ids_pkey", "ALTER TABLE event_ids ADD PRIMARY KEY (app_id, occurred_at, id)"),
        ("DROP INDEX event_ids_by_received_at", "CREATE INDEX event_ids_by_received_at ON event_ids (received_at)"),
    ]
    # Server settings for the load only (ALTER SYSTEM, reset before measuring): checkpoints every 4 GB of WAL
    # rather than every 1 GB (the load writes tens of GB), and no autovacuum scanning rows while they are
    # written (the load vacuums them itself, once, before measuring).
    load_settings = {"max_wal_size": "4GB", "checkpoint_timeout": "30min", "autovacuum": "off"}

    def __init__(self, workdir: Path, options):
        self.workdir, self.options = workdir, options
        self.postgres = Postgres(workdir / "postgres")
        self.version = self.psql("SHOW server_version", "postgres")

    def psql(self, sql: str, database: str = "herald") -> str:
        """Runs `sql` in one psql session (statements separated by semicolons in turn) and returns its output."""
        result = subprocess.run(["psql", "-X", "-qAt", "-v", "ON_ERROR_STOP=1", self.postgres.url(database), "-c", sql],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise BenchError(f"psql failed ({result.returncode}) on {sql[:300]!r}: {result.stderr.strip()}")
        return result.stdout.strip()

    def numbers(self, sql: str) -> list[int]:
        """The one row `sql` gives, each column a number."""
        text = self.psql(sql)
        try:
            return [int(value) for value in text.split("|")]
        except ValueError:
            raise BenchError(f"{sql!r} gave {text!r}, not numbers") from None

    def number(self, sql: str) -> int:
        return self.numbers(sql)[0]

    def run_jobs(self, jobs: list[tuple[str, str]], what: str) -> float:
        """Runs (label, sql) jobs in `--jobs` psql sessions at once, saying when each ends; returns the seconds."""
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(self.options.jobs) as pool:
            futures = {pool.submit(self.psql, sql): label for label, sql in jobs}
            for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
                future.result()  # raises the job's failure
                say(f"  {what}: {futures[future]} done ({done}/{len(jobs)}, {time.perf_counter() - started:.0f} s)")
        return time.perf_counter() - started

    def prepare(self, setup_file: Path, context: dict, days: list[str]) -> None:
        """`herald copy` of the setup into an empty database, then the months' partitions of `events`."""
        self.postgres.sql("CREATE DATABASE herald")
        started = time.perf_counter()
        wait_for_binary()
        copied = subprocess.run([str(BINARY), "copy", "--from", str(setup_file), "--to", self.postgres.url("herald"), "--resources", str(ROOT)],
                                capture_output=True, text=True)
        if copied.returncode != 0:
            raise BenchError(f"herald copy failed ({copied.returncode}): {copied.stderr.strip()}")
        with sqlite3.connect(f"file:{setup_file}?mode=ro", uri=True) as source:
            for table in ("campaigns", "device_bitmaps", "device_sketches", "device_numbers", "users", "api_keys"):
                expected = source.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                if self.number(f"SELECT count(*) FROM {table}") != expected:
                    raise BenchError(f"herald copy did not bring the {expected:,} rows of {table}: {copied.stdout}")
        say(f"herald copy into PostgreSQL in {time.perf_counter() - started:.1f} s")
        for month in sorted({day[:7] for day in days}):
            self.psql(f"SELECT herald_events_partition('{month}-01T00:00:00Z')")
        # The key that seals push credentials moves with them: the one beside the SQLite file if Herald made
        # it (it does when it first seals one; this installation has none), else a file the server makes.
        self.secret_key = Path(f"{setup_file}.key")
        if not self.secret_key.exists():
            self.secret_key = self.workdir / "secret.key"

    def index_definitions(self) -> str:
        return self.psql("SELECT tablename || ' ' || indexname || ' ' || indexdef FROM pg_indexes "
                         "WHERE tablename = 'event_ids' OR tablename = 'events' OR tablename LIKE 'events\\_%' ORDER BY 1")

    def configure(self, loading: bool) -> None:
        """Puts load_settings in place for a load, or back to what `Postgres` started with; checks they took."""
        for name, value in self.load_settings.items():
            self.psql(f"ALTER SYSTEM SET {name} = '{value}'" if loading else f"ALTER SYSTEM RESET {name}")
        self.psql("SELECT pg_reload_conf()")
        time.sleep(0.5)  # the postmaster rereads the file on the signal, then the backends
        for name, value in self.load_settings.items():
            shown = self.psql(f"SELECT setting || coalesce(unit, '') || ' from ' || coalesce(sourcefile, source) FROM pg_settings WHERE name = '{name}'")
            if loading != shown.endswith("postgresql.auto.conf"):
                raise BenchError(f"{name} is {shown} {'for' if loading else 'after'} the load, where {value} was {'set' if loading else 'reset'}")

    def selection(self, first: int, total: int, low: int, high: int, start_ms: int, span_ms: int) -> str:
        """A SELECT of events `low` to `high` (excluded) of a step of `total` events numbered from `first`,
        with n, h, received, occurred and id: the step's events spread evenly over the span."""
        return f"""
            SELECT n, h, received, received - make_interval(secs => (h >> 17) % 3600) AS occurred,
                substr(x, 1, 8) || '-' || substr(x, 9, 4) || '-7000-8000-' || lpad(to_hex(n), 12, '0') AS id
            FROM (SELECT n, {HASH} AS h, to_timestamp(ms / 1000.0) AS received, lpad(to_hex(ms), 12, '0') AS x
                  FROM (SELECT n, {start_ms} + ((n - {first}) * {span_ms}) / {total} AS ms
                        FROM generate_series({low}::int8, {high - 1}::int8) AS n) AS timed) AS hashed"""

    def load(self, context: dict, first: int, target: int, start_ms: int, span_ms: int) -> tuple[dict, dict]:
        """Adds events `first` to `target` (excluded) with their ids, vacuums, builds the indexes again and
        derives the rollups; checks each; returns the seconds each phase took and the rows counted."""
        self.configure(loading=True)
        app = context["app"]
        before = self.index_definitions()
        for drop, _ in self.indexes:
            self.psql(drop)
        jobs = []
        for low in range(first, target, ROWS_PER_STATEMENT):
            high = min(target, low + ROWS_PER_STATEMENT)
            select = self.selection(first, target - first, low, high, start_ms, span_ms)
            # events and event_ids alternate, so the sessions at work write to different tables.
            jobs.append((f"events {low:,}–{high:,}", f"""SET synchronous_commit = off;
                INSERT INTO events (id, app_id, campaign_id, type, platform, installation_id, detail, language, occurred_at, day, url, test, received_at)
                SELECT id, {event_columns(app, context['campaigns'], context['population'])},
                    occurred, to_char(occurred AT TIME ZONE 'UTC', 'YYYY-MM-DD'), NULL, false, received
                FROM ({select}) AS g"""))
            jobs.append((f"event_ids {low:,}–{high:,}", f"""SET synchronous_commit = off;
                INSERT INTO event_ids (app_id, occurred_at, id, received_at) SELECT {app}, occurred, id, received FROM ({select}) AS g"""))
        phases = {}
        say(f"inserting events {first:,} to {target:,} and their ids ({len(jobs)} statements, {self.options.jobs} sessions)")
        phases["insert"] = self.run_jobs(jobs, "insert")

        # Vacuumed before the indexes are built again (the heap alone to scan): sets the pages' hint bits and
        # visibility, and leaves autovacuum nothing to do on these rows while reports are measured.
        say("VACUUM (ANALYZE) of events and event_ids")
        phases["vacuum"] = self.run_jobs([(table, f"VACUUM (ANALYZE) {table}") for table in ("events", "event_ids")], "vacuum")

        say(f"building the 4 indexes again ({self.options.jobs} sessions, maintenance_work_mem 1 GB each)")
        phases["indexes"] = self.run_jobs([(create, f"SET maintenance_work_mem = '1GB'; {create}") for _, create in self.indexes], "index")
        after = self.index_definitions()
        if after != before:
            raise BenchError(f"the indexes built again differ from 0004_events.sql's:\nbefore:\n{before}\nafter:\n{after}")

        # The rollups derived from the raw rows, all of them again: one scan into a small table by every key
        # either rollup has (an unlogged table, not a temporary one, so the scan may use parallel workers).
        say("deriving event_rollups and event_language_rollups from the raw events (one scan)")
        started = time.perf_counter()
        self.psql("""SET synchronous_commit = off;
            DROP TABLE IF EXISTS bench_tally;
            CREATE UNLOGGED TABLE bench_tally AS
                SELECT campaign_id, day, platform, test, type, detail, coalesce(language, '') AS language, count(*) AS count
                FROM events GROUP BY 1, 2, 3, 4, 5, 6, 7;
            BEGIN;
            TRUNCATE event_rollups, event_language_rollups;
            INSERT INTO event_rollups (campaign_id, day, platform, test, type, detail, count)
                SELECT campaign_id, day, platform, test, type, detail, sum(count) FROM bench_tally GROUP BY 1, 2, 3, 4, 5, 6;
            INSERT INTO event_language_rollups (campaign_id, day, test, language, type, count)
                SELECT campaign_id, day, test, language, type, sum(count) FROM bench_tally GROUP BY 1, 2, 3, 4, 5;
            COMMIT;
            DROP TABLE bench_tally""")
        # Vacuumed as autovacuum leaves the days before today (psql -c runs one string as one transaction,
        # where VACUUM may not run): their pages all-visible, so the report's language rows are read from
        # the index that holds them (migrations/postgres/0008), not page by page from the table.
        self.psql("VACUUM (ANALYZE) event_rollups, event_language_rollups")
        phases["rollups"] = time.perf_counter() - started
        # Counted after the vacuum, so a count may read an index alone (every page all-visible).
        counted = check_counts(self, target, ("events", "SELECT count(*) FROM events"), ("event_ids", "SELECT count(*) FROM event_ids"))
        self.configure(loading=False)
        self.psql("CHECKPOINT")  # the load's dirty pages written before measuring
        return phases, counted

    def sizes(self) -> dict[str, int]:
        wal = sum(f.stat().st_size for f in (self.postgres.folder / "data" / "pg_wal").iterdir() if f.is_file())
        return {"database": self.number("SELECT pg_database_size('herald')"),
                "events": self.number("SELECT sum(pg_total_relation_size(relid))::int8 FROM pg_partition_tree('events')"),
                "event_ids": self.number("SELECT pg_total_relation_size('event_ids')"), "WAL": wal}

    def server(self, log: Path, binary: Path | None = None) -> Server:
        return Server(self.postgres.url("herald"), log, extra=["--secret-key", str(self.secret_key)], binary=binary)

    def stop(self) -> None:
        self.postgres.stop()


class SQLiteEngine:
    """Herald's own SQLite file: the setup's, events added to it."""

    name = "SQLite"
    bytes_per_event = 250  # until a step has measured it: 212 bytes measured at 1 M events, with events_by_received_at
    wal_room = 2e9  # the load's WAL file, checkpointed after each statement

    def __init__(self, workdir: Path, options):
        self.workdir, self.options = workdir, options
        self.version = sqlite3.sqlite_version

    def numbers(self, sql: str) -> list[int]:
        """The one row `sql` gives, each column a number."""
        with sqlite3.connect(f"file:{self.file}?mode=ro", uri=True) as connection:
            row = connection.execute(sql).fetchone()
        if not row or not all(isinstance(value, int) for value in row):
            raise BenchError(f"{sql!r} gave {row!r}, not numbers")
        return list(row)

    def number(self, sql: str) -> int:
        return self.numbers(sql)[0]

    def prepare(self, setup_file: Path, context: dict, days: list[str]) -> None:
        self.file = setup_file

    def load(self, context: dict, first: int, target: int, start_ms: int, span_ms: int) -> tuple[dict, dict]:
        """Adds events `first` to `target` (excluded), makes the index again and derives the rollups; returns
        the seconds each phase took and the rows counted."""
        total = target - first
        connection = sqlite3.connect(self.file, isolation_level=None)
        try:
            # This connection only: no sync while loading, a 1 GB cache, the sorter on two threads.
            for pragma in ("synchronous = OFF", "cache_size = -1000000", "threads = 2", "busy_timeout = 10000"):
                connection.execute(f"PRAGMA {pragma}")
            index = "CREATE INDEX events_by_received_at ON events(received_at)"  # as migration 0012 makes it
            made = connection.execute("SELECT sql FROM sqlite_master WHERE name = 'events_by_received_at'").fetchone()
            if not made or made[0] != index:
                raise BenchError(f"events_by_received_at is {made!r}, not {index!r}: has migration 0012 changed?")
            connection.execute("DROP INDEX events_by_received_at")
            phases = {}
            say(f"inserting events {first:,} to {target:,} (one connection)")
            started = time.perf_counter()
            for low in range(first, target, ROWS_PER_STATEMENT):
                high = min(target, low + ROWS_PER_STATEMENT)
                # Times as Herald writes them (`YYYY-MM-DD HH:MM:SS.mmm`, UTC); the id from the milliseconds and n.
                connection.execute(f"""
                    INSERT INTO events (id, app_id, campaign_id, type, platform, installation_id, detail, language, occurred_at, day, url, test, received_at)
                    WITH RECURSIVE series(n) AS (SELECT {low} UNION ALL SELECT n + 1 FROM series WHERE n < {high - 1})
                    SELECT printf('%08x-%04x-7000-8000-%012x', ms >> 16, ms & 65535, n), {event_columns(context['app'], context['campaigns'], context['population'])},
                        occurred, substr(occurred, 1, 10), NULL, 0, strftime('%Y-%m-%d %H:%M:%f', ms / 1000.0, 'unixepoch')
                    FROM (SELECT n, h, ms, strftime('%Y-%m-%d %H:%M:%f', ms / 1000.0 - (h >> 17) % 3600, 'unixepoch') AS occurred
                          FROM (SELECT n, {HASH} AS h, {start_ms} + ((n - {first}) * {span_ms}) / {total} AS ms FROM series))""")
                connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                say(f"  insert: events {low:,}–{high:,} done ({time.perf_counter() - started:.0f} s)")
            phases["insert"] = time.perf_counter() - started
            say("making events_by_received_at again")
            started = time.perf_counter()
            connection.execute(index)
            phases["indexes"] = time.perf_counter() - started
            say("deriving event_rollups and event_language_rollups from the raw events (one scan)")
            started = time.perf_counter()
            connection.execute("""CREATE TEMP TABLE tally AS
                SELECT campaign_id, day, platform, test, type, detail, coalesce(language, '') AS language, count(*) AS count
                FROM events GROUP BY 1, 2, 3, 4, 5, 6, 7""")
            connection.execute("BEGIN")
            connection.execute("DELETE FROM event_rollups")
            connection.execute("DELETE FROM event_language_rollups")
            connection.execute("""INSERT INTO event_rollups (campaign_id, day, platform, test, type, detail, count)
                SELECT campaign_id, day, platform, test, type, detail, sum(count) FROM tally GROUP BY 1, 2, 3, 4, 5, 6""")
            connection.execute("""INSERT INTO event_language_rollups (campaign_id, day, test, language, type, count)
                SELECT campaign_id, day, test, language, type, sum(count) FROM tally GROUP BY 1, 2, 3, 4, 5""")
            connection.execute("COMMIT")
            connection.execute("DROP TABLE tally")
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            phases["rollups"] = time.perf_counter() - started
        finally:
            connection.close()
        return phases, check_counts(self, target, ("events", "SELECT count(*) FROM events"))

    def sizes(self) -> dict[str, int]:
        wal = Path(f"{self.file}-wal")
        return {"database": self.file.stat().st_size, "WAL": wal.stat().st_size if wal.exists() else 0}

    def server(self, log: Path, binary: Path | None = None) -> Server:
        return Server(self.file, log, binary=binary)

    def stop(self) -> None:
        pass


def check_counts(engine, target: int, *counts: tuple[str, str]) -> dict[str, int]:
    """The step's raw rows and the rollups' totals, each `target`; returns the raw rows counted."""
    counted = {}
    for table, sql in (*counts, ("event_rollups", "SELECT coalesce(sum(count), 0) FROM event_rollups"),
                       ("event_language_rollups", "SELECT coalesce(sum(count), 0) FROM event_language_rollups")):
        counted[table] = engine.number(sql)
        if counted[table] != target:
            raise BenchError(f"{table} counts {counted[table]:,} events, not {target:,}")
    return {table: counted[table] for table, _ in counts}


# ---- setup through Herald on SQLite ----

def fill_bitmaps(database: Path, campaigns: list[tuple[int, int]], days: list[str]) -> dict[int, tuple[int, int]]:
    """Device bitmaps as bench/devices.py writes them, for (campaign, devices a day) pairs; returns each
    campaign's chunk rows and the distinct devices of all its days (the union's bits)."""
    figures = {}
    with sqlite3.connect(database) as connection:
        for campaign, devices in campaigns:
            chunks = (devices * 4 + CHUNK_BITS - 1) // CHUNK_BITS
            union = [0] * chunks
            rows = 0
            for day in days:
                bitmaps = []
                for chunk in range(chunks):
                    words = int.from_bytes(os.urandom(512), "little") & int.from_bytes(os.urandom(512), "little")
                    if chunk == chunks - 1 and (devices * 4) % CHUNK_BITS:
                        words &= (1 << ((devices * 4) % CHUNK_BITS)) - 1  # no device past the population
                    union[chunk] |= words
                    bitmaps.append((campaign, day, chunk, words.to_bytes(512, "little")))
                connection.executemany(
                    "INSERT INTO device_bitmaps (campaign_id, test, kind, day, chunk, bits) VALUES (?, 0, 'seen', ?, ?, ?)", bitmaps)
                rows += len(bitmaps)
            figures[campaign] = (rows, sum(words.bit_count() for words in union))
    return figures


def setup(workdir: Path, options, days: list[str]) -> tuple[Path, dict]:
    """User, app, key and published campaigns through Herald on SQLite; bitmaps and Herald's sketches; the
    app's device numbers. Returns the file and what the rest needs."""
    database = workdir / "herald.sqlite"
    wait_for_binary()
    cli("user", "create", "--email", EMAIL, "--role", "admin", "--password-stdin", database=database, stdin=PASSWORD + "\n")
    app = int(cli("app", "create", "--name", "Bench", "--platform", "ios", "--platform", "android", database=database).split()[-1])
    key = cli("key", "create", "--app", str(app), "--scope", "campaigns:read", "--scope", "campaigns:write", database=database).split()[-1]
    server = Server(database, workdir / "setup.log")
    campaigns = []
    try:
        server.wait_ready()
        api = Client(server.base, key=key)
        for index in range(options.campaigns):
            body = {"app": app, "name": f"Bench {index + 1}", "triggers": [{"event": "app_launch"}],
                    "message": {"layout": "modal", "title": {"text": f"Hello {index + 1}"}, "body": {"text": "Twenty percent off today."}}}
            _, _, reply = api.request("POST", "/api/v1/campaigns", json.dumps(body).encode())
            campaign = json.loads(reply)["id"]
            api.request("POST", f"/api/v1/campaigns/{campaign}/publish", b"")
            campaigns.append(campaign)
        api.close()
    finally:
        server.stop()

    # The first campaign is the measured one (estimated past 1024 chunk rows), the second has few devices
    # (counted exactly), the rest have as many as the first so the tables hold more than one campaign's rows.
    exact_devices = max(1, options.devices // 100)
    audiences = [(campaign, exact_devices if index == 1 else options.devices) for index, campaign in enumerate(campaigns)]
    started = time.perf_counter()
    bitmaps = fill_bitmaps(database, audiences, days)
    say(f"bitmaps: {sum(rows for rows, _ in bitmaps.values()):,} chunk rows for {len(campaigns)} campaigns in {time.perf_counter() - started:.1f} s")
    # The days' and weeks' sketches are made by Herald's own code, as bench/devices.py makes them: migrations
    # 0017 and 0018 are undone and applied again, and their data steps build each day's sketch and chunk count
    # from the bitmaps, then each week's from its days; 0024 then gives the tables their kind column again.
    population = options.devices * 4
    with sqlite3.connect(database) as connection:
        connection.execute("DROP TABLE device_week_sketches")
        connection.execute("DROP TABLE device_sketches")
        deleted = connection.execute(
            "DELETE FROM grdb_migrations WHERE identifier IN ('0017_device_sketches', '0018_device_week_sketches', '0024_device_kinds')"
        ).rowcount
        # Device numbers for the population (installation `d-<n>` is number n), as ingestion would have left
        # them, so the database stays coherent for a later ingestion; reports do not read them.
        connection.execute(f"""INSERT INTO device_numbers (app_id, installation_id, number)
            WITH RECURSIVE series(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM series WHERE n < {population - 1})
            SELECT {app}, 'd-' || n, n FROM series""")
        connection.execute("INSERT INTO device_number_counters (app_id, next_number) VALUES (?, ?)", (app, population))
    if deleted != 3:
        raise BenchError("migrations 0017, 0018 and 0024 were not all recorded in grdb_migrations: has an identifier changed?")
    started = time.perf_counter()
    cli("migrate", database=database)
    with sqlite3.connect(database) as connection:
        sketches = connection.execute("SELECT count(*) FROM device_sketches").fetchone()[0]
        weeks = connection.execute("SELECT count(*) FROM device_week_sketches").fetchone()[0]
    if sketches != len(campaigns) * len(days):
        raise BenchError(f"migration 0017 made {sketches:,} sketches, not {len(campaigns) * len(days):,}")
    if weeks != len(campaigns) * len({date.fromisoformat(day).isocalendar()[:2] for day in days}):
        raise BenchError(f"migration 0018 made {weeks:,} week sketches, not one a campaign and week")
    say(f"sketches: {sketches:,} days and {weeks:,} weeks made by migrations 0017 and 0018 in {time.perf_counter() - started:.1f} s")
    return database, {"app": app, "key": key, "campaigns": campaigns, "bitmaps": bitmaps, "population": population}


# ---- measuring ----

def measure(workdir: Path, engine, context: dict, days: list[str], step: int, options) -> list[dict]:
    """Herald on the database, as shipped: the pages' server and client times; the answers checked. With
    `--against`, a second server runs that binary on the same database and every request goes to both, in
    turn (which goes first alternating by round), so both see the same machine."""
    measured, exact = context["campaigns"][0], context["campaigns"][1]
    every = f"from={days[0]}&to={days[-1]}"
    wait_for_binary()
    binaries = [(None, "")] + ([(options.against, f" [{options.against.name}]")] if options.against else [])
    servers = []
    try:
        for number, (binary, _) in enumerate(binaries):
            servers.append(engine.server(workdir / f"server-{step}-{number}.log", binary=binary))
            servers[-1].wait_ready(60)
        clients = [(Client(server.base, key=context["key"]), sign_in(server.base, EMAIL, PASSWORD)) for server in servers]
        pages = [
            (f"stats endpoint, {len(days)} days", 0, f"/api/v1/campaigns/{measured}/stats?{every}"),
            (f"stats endpoint, {len(days)} days, campaign of {max(1, options.devices // 100):,} devices a day", 0,
             f"/api/v1/campaigns/{exact}/stats?{every}"),
            (f"campaign report, {len(days)} days", 1, f"/campaigns/{measured}/report?{every}"),
            ("campaign report, 30 days (default)", 1, f"/campaigns/{measured}/report"),
            (f"/reports, {len(days)} days", 1, f"/reports?{every}"),
        ]
        for _ in range(options.warmup):
            for _, kind, path in pages:
                for pair in clients:
                    pair[kind].request("GET", path)
        offsets = [server.log_offset() for server in servers]
        # Per server and page: (request id, client ms); the answers, per server and page.
        sent: list[list[list[tuple[str, float]]]] = [[[] for _ in pages] for _ in servers]
        answers: list[list[bytes]] = [[b""] * len(pages) for _ in servers]
        # Interleaved request by request, so whatever else the machine does falls on every page alike.
        for round_number in range(options.repeat):
            for index, (_, kind, path) in enumerate(pages):
                order = list(range(len(servers)))
                for number in order if round_number % 2 == 0 else order[::-1]:
                    started = time.perf_counter()
                    _, headers, reply = clients[number][kind].request("GET", path)
                    elapsed = (time.perf_counter() - started) * 1000
                    request_id = headers.get("X-Request-Id")
                    if not request_id:
                        raise BenchError(f"{path} answered without X-Request-Id")
                    sent[number][index].append((request_id, elapsed))
                    answers[number][index] = reply
        for pair in clients:
            for client in pair:
                client.close()
        logged: list[dict[str, float]] = []
        for server, offset, requests in zip(servers, offsets, sent):
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # the request log is written by a thread of its own
                with open(server.log_path, "rb") as log:
                    log.seek(offset)
                    found = {m.group("id"): float(m.group("ms")) for m in LOG_LINE.finditer(log.read().decode("utf-8", "replace"))
                             if m.group("status") == "200"}
                if all(request_id in found for page in requests for request_id, _ in page):
                    break
                time.sleep(0.2)
            else:
                raise BenchError(f"the request log {server.log_path} lacks some of the measured requests")
            logged.append(found)
    finally:
        for server in servers:
            server.stop()

    # The stats' impressions against the raw rows themselves, not the rollups they were derived from (one
    # scan for both campaigns: at 100 M events a scan takes minutes).
    raw_impressions = dict(zip((measured, exact), engine.numbers(
        f"SELECT count(*) FILTER (WHERE campaign_id = {measured}), count(*) FILTER (WHERE campaign_id = {exact}) FROM events "
        f"WHERE type = 'impression' AND campaign_id IN ({measured}, {exact}) AND day BETWEEN '{days[0]}' AND '{days[-1]}'")))
    results = []
    for (_, suffix), server_sent, server_answers, server_logged in zip(binaries, sent, answers, logged):
        results += page_results(pages, suffix, server_sent, server_answers, server_logged, raw_impressions, context)
    return results


def page_results(pages, suffix: str, sent, answers, logged: dict[str, float], raw_impressions: dict, context: dict) -> list[dict]:
    """One server's figures per page, its stats answers checked against the raw rows and the bitmaps."""
    results = []
    for (label, _, path), requests, answer in zip(pages, sent, answers):
        note = ""
        if path.startswith("/api/"):
            campaign = int(path.split("/")[4])
            totals = json.loads(answer)["totals"]
            raw = raw_impressions[campaign]
            if totals["impressions"] != raw:
                raise BenchError(f"the stats endpoint says {totals['impressions']:,} impressions for campaign {campaign}, the raw rows {raw:,}")
            rows, distinct = context["bitmaps"][campaign]
            counted, estimated, error = check_devices(totals, rows, distinct)
            note = (f"{totals['impressions']:,} impressions = raw rows; {counted:,} devices "
                    + (f"estimated for {distinct:,} ({error:+.2%})" if estimated else "counted") + f" from {rows:,} chunk rows")
        results.append({"page": label + suffix, "server": [logged[request_id] for request_id, _ in requests],
                        "client": [elapsed for _, elapsed in requests], "note": note or f"{len(answer):,} bytes"})
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, nargs="+", default=[10_000_000, 100_000_000], help="raw events in total at each step, ascending")
    parser.add_argument("--engine", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--devices", type=int, default=100_000, help="devices a day of the measured campaign (its bitmaps)")
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--campaigns", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2, help="PostgreSQL sessions loading at once")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (databases, logs)")
    parser.add_argument("--against", type=Path, help="another herald binary, served beside the built one on the same database, "
                        "every request sent to both in turn: a before and after that the machine's drift falls on alike")
    options = parser.parse_args()
    if options.events != sorted(set(options.events)) or options.events[0] <= 0:
        parser.error("--events: positive totals, ascending")
    if options.campaigns < 2:
        parser.error("--campaigns: at least 2 (one estimated, one counted)")
    if options.against and not os.access(options.against, os.X_OK):
        parser.error(f"--against: {options.against} is not an executable file")
    if options.against:
        options.against = options.against.resolve()

    today = datetime.now(timezone.utc).date()
    days = [(today - timedelta(days=offset)).isoformat() for offset in range(options.days - 1, -1, -1)]
    # Received from an hour into the first day (an event occurred up to an hour before) to a minute ago.
    start_ms = int(datetime.fromisoformat(days[0]).replace(tzinfo=timezone.utc).timestamp() * 1000) + 3_600_000
    span_ms = int(time.time() * 1000) - 60_000 - start_ms
    if span_ms <= 0:
        parser.error("--days: at least 1, and the run starts after 01:01 UTC when it is 1")

    workdir = Path(tempfile.mkdtemp(prefix="herald-reports-bench-"))
    os.chmod(workdir, 0o755)  # PostgreSQL's own user reaches its folder inside
    engine = None
    steps, results = [], []
    try:
        say(f"temporary folder {workdir}; {len(days)} days {days[0]} to {days[-1]}, {options.campaigns} campaigns, "
            f"{options.devices:,} devices a day")
        engine = (PostgresEngine if options.engine == "postgres" else SQLiteEngine)(workdir, options)
        say(f"{engine.name} {engine.version}")
        setup_file, context = setup(workdir, options, days)
        engine.prepare(setup_file, context, days)
        baseline = engine.sizes()["database"]  # before any event: what a byte per event leaves out
        stored = 0
        for step, target in enumerate(options.events, 1):
            # The disk this step needs, from what the last one took per event: its rows, the index builds'
            # sort files (they sort every event's keys) and the WAL, checked before anything is written.
            used = (engine.sizes()["database"] - baseline) / stored if stored else engine.bytes_per_event
            needed = used * (target - stored) + used * target * SORT_ROOM + engine.wal_room
            free = shutil.disk_usage(workdir).free
            say(f"{used:.0f} bytes an event{' so far' if stored else ' (a guess)'}: {(target - stored) * used / 1e9:.1f} GB more for "
                f"{target:,} events, {needed / 1e9:.1f} GB at the peak with sort files and WAL; {free / 1e9:.1f} GB free")
            if needed > free:
                raise BenchError(f"{target:,} events need about {needed / 1e9:.0f} GB of disk at the peak, {free / 1e9:.0f} GB are free")
            started = time.perf_counter()
            phases, counts = engine.load(context, stored, target, start_ms, span_ms)
            loaded = time.perf_counter() - started
            stored = target
            counts.update({table: engine.number(f"SELECT count(*) FROM {table}")
                           for table in ("event_rollups", "event_language_rollups", "device_bitmaps", "device_sketches")})
            sizes = engine.sizes()
            steps.append((target, counts, sizes, phases, loaded))
            say(f"{target:,} events loaded in {loaded:.0f} s (" + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in phases.items()) + "); "
                + ", ".join(f"{name} {size / 1e9:.2f} GB" for name, size in sizes.items()) + "; rows: "
                + ", ".join(f"{table} {count:,}" for table, count in counts.items()))
            say(f"measuring: {options.warmup} rounds of warm-up, then {options.repeat} rounds")
            for result in measure(workdir, engine, context, days, step, options):
                results.append((target, result))
                say(f"  {result['page']}: server p50 {percentile(result['server'], 0.5):.1f} ms, p99 {percentile(result['server'], 0.99):.1f} ms; "
                    f"{result['note']}")
    finally:
        if engine:
            engine.stop()
        if options.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    print(f"\n{engine.name} {engine.version}, {len(days)} days, {options.campaigns} campaigns, {options.devices:,} devices a day for the measured "
          "campaign (bitmaps generated as bench/devices.py does, not derived from the raw rows, which no report reads)")
    size_names = list(steps[0][2]) if steps else []
    phase_names = list(steps[0][3]) if steps else []
    print(f"\n| events | rows: events / event_ids / event_rollups / device_bitmaps | {' / '.join(size_names)} | load: {' / '.join(phase_names)} (all) |")
    print("|---|---|---|---|---|")
    for target, counts, sizes, phases, loaded in steps:
        print(f"| {target:,} | " + " / ".join(format(counts[table], ",") if table in counts else "–"
                                           for table in ("events", "event_ids", "event_rollups", "device_bitmaps")) + " | "
              + " / ".join(f"{size / 1e9:.2f}" for size in sizes.values()) + " GB | "
              + " / ".join(f"{seconds:.0f}" for seconds in phases.values()) + f" s ({loaded:.0f} s) |")
    print(f"\nServer time from Herald's request log, client wall time beside it, {options.repeat} requests each after {options.warmup} of warm-up")
    print("\n| events | page | server p50 / p99 ms | client p50 / p99 ms | answer |")
    print("|---|---|---|---|---|")
    for target, result in results:
        print(f"| {target:,} | {result['page']} | {percentile(result['server'], 0.5):.1f} / {percentile(result['server'], 0.99):.1f} | "
              f"{percentile(result['client'], 0.5):.1f} / {percentile(result['client'], 0.99):.1f} | {result['note']} |")


if __name__ == "__main__":
    try:
        main()
    except BenchError as error:
        raise SystemExit(f"reports.py: {error}")
