#!/usr/bin/env python3
"""Ingestion and report benchmark. Loads N events (default 10 million) through POST /api/v1/events in
1000-event batches from 4 concurrent client processes, checks every accepted event is stored, then
inserts the same kind of rows straight into SQLite from one process (the same `events` table, the
same pragmas, one commit per 1000 rows) for the side-by-side figure, and finally times the stats
endpoint and the report pages over the loaded database.

Event ids are UUIDv7 (time-ordered), as Herald's delivery client makes them; `--random-ids` sends
random (v4) UUIDs instead. Server time of the read requests comes from Herald's own request log
(`GET /path 200 3.2ms`), so client overhead is not counted.
Run from the repository root:  python3 bench/events.py [--events 10000000]
It builds the release binary if needed and uses a temporary database."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sqlite3
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from common import BINARY, LOG_LINE, ROOT, Client, cli, ensure_binary, percentile, sign_in


BATCH = 1000
EVENT_KINDS = [("impression", "")] * 6 + [("click", ',"action":"primary"'), ("dismiss", ',"dismissType":"auto"'),
                                          ("error", ',"errorCode":"image_fetch"'), ("conversion", ',"event":"purchase"')]
# Language versions installations are shown, in turn; a third of them see the default version (None), which reports
# no `language` (`--languages N` uses the first N).
LANGUAGES = ["fa", "de", "ja", "ar", "pt-BR", "zh-Hant", "es-419", "he", "ko", "ru"]


def shown_languages(count: int) -> list:
    versions = LANGUAGES[:max(0, min(count, len(LANGUAGES)))]
    return [None] * max(1, len(versions) // 2) + versions


# EventStore's query for a campaign's split by language shown (the top 20 and the rest).
LANGUAGE_SPLIT = """
    WITH shown AS (
        SELECT language, type, SUM(count) AS count FROM event_language_rollups
        WHERE campaign_id = ? AND day BETWEEN ? AND ? AND test = 0 GROUP BY language, type),
    top AS (
        SELECT language FROM shown GROUP BY language
        ORDER BY SUM(CASE WHEN type = 'impression' THEN count ELSE 0 END) DESC, SUM(count) DESC, language LIMIT ?)
    SELECT CASE WHEN language IN (SELECT language FROM top) THEN language END AS named, type, SUM(count) AS count
    FROM shown GROUP BY named, type"""


def event_id(generator: random.Random, random_ids: bool) -> str:
    """A UUIDv7 (48 bits of Unix milliseconds, version, random bits, variant), or a v4 with `random_ids`."""
    if random_ids:
        value = generator.getrandbits(128) & ~(0xF << 76) | (0x4 << 76)
    else:
        value = (time.time_ns() // 1_000_000) << 80 | 0x7 << 76 | generator.getrandbits(76)
    value = value & ~(0x3 << 62) | (0x2 << 62)
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def event_rows(batch: int, batches: int, campaigns: list[int], now: float, days: int, generator: random.Random, random_ids: bool,
               languages: list):
    """The events of one batch as (id, type, campaign, occurredAt, platform, installation, detail field, language) tuples.
    Batches follow time as live traffic does: batch k of n was sent k/n of the way through the last `days`
    days, with events that happened up to an hour before it, so the load leaves a history of `days` days."""
    rows = []
    sent = now - days * 86_400 * (1 - batch / batches)
    for index in range(BATCH):
        counter = batch * BATCH + index
        kind, extra = EVENT_KINDS[counter * 7919 % len(EVENT_KINDS)]
        occurred = datetime.fromtimestamp(sent - generator.randrange(3600), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        installation = generator.randrange(50_000)
        rows.append((event_id(generator, random_ids), kind, campaigns[counter % len(campaigns)], occurred,
                     "ios" if counter % 3 else "android", f"iid-{installation}", extra, languages[installation % len(languages)]))
    return rows


def post_batches(base: str, key: str, campaigns: list[int], share: range, batches: int, now: float, days: int, random_ids: bool,
                 languages: list):
    """One client process: posts its share of the batches; returns (accepted, batch latencies in ms)."""
    client = Client(base, key=key)
    generator = random.Random(share.start)
    accepted, latencies = 0, []
    for batch in share:
        items = ",".join(f'{{"id":"{id}","type":"{kind}","campaignId":{campaign},"occurredAt":"{occurred}","platform":"{platform}",'
                         f'"installationId":"{installation}"{extra}' + (f',"language":"{language}"}}' if language else "}")
                         for id, kind, campaign, occurred, platform, installation, extra, language in
                         event_rows(batch, batches, campaigns, now, days, generator, random_ids, languages))
        started = time.perf_counter()
        status, _, reply = client.request("POST", "/api/v1/events", f'{{"events":[{items}]}}'.encode())
        latencies.append((time.perf_counter() - started) * 1000)
        if status != 200:
            raise SystemExit(f"POST /api/v1/events answered {status}: {reply[:300]!r}")
        accepted += json.loads(reply)["accepted"]
    return accepted, latencies


def raw_sqlite_rate(workdir: Path, events: int, campaigns: list[int], now: float, days: int, random_ids: bool, languages: list) -> float:
    """Events/s for plain inserts of the same rows into Herald's own `events` table (created by `herald
    migrate`), with Herald's pragmas (WAL, synchronous=FULL, 32 MB cache), one commit per batch; only
    the inserts and commits are timed, not the making of the rows."""
    database = workdir / "raw.sqlite"
    cli("migrate", database=database)
    connection = sqlite3.connect(database, isolation_level=None)
    for pragma in ("journal_mode = WAL", "synchronous = FULL", "cache_size = -32768"):
        connection.execute(f"PRAGMA {pragma}")
    generator = random.Random(7)
    timed = 0.0
    details = {"": "", ',"action":"primary"': "primary", ',"dismissType":"auto"': "auto", ',"errorCode":"image_fetch"': "image_fetch",
               ',"event":"purchase"': "purchase"}
    batches = events // BATCH
    for batch in range(batches):
        received = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.000")
        rows = [(id, 1, campaign, kind, occurred.replace("T", " ").replace("Z", ".000"), occurred[:10], platform, installation,
                 details[extra], None, 0, received, language)
                for id, kind, campaign, occurred, platform, installation, extra, language
                in event_rows(batch, batches, campaigns, now, days, generator, random_ids, languages)]
        started = time.perf_counter()
        connection.execute("BEGIN")
        connection.executemany("INSERT OR IGNORE INTO events (id, app_id, campaign_id, type, occurred_at, day, platform, installation_id, "
                               "detail, url, test, received_at, language) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        connection.execute("COMMIT")
        timed += time.perf_counter() - started
    connection.close()
    return batches * BATCH / timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--campaigns", type=int, default=20)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--days", type=int, default=90, help="events occur over this many past days")
    parser.add_argument("--random-ids", action="store_true", help="random (v4) event ids instead of time-ordered (v7)")
    parser.add_argument("--raw-events", type=int, help="events for the raw SQLite comparison (default: as many as --events)")
    parser.add_argument("--repeat", type=int, default=30, help="requests per timed page")
    parser.add_argument("--languages", type=int, default=5, help="language versions shown besides the default (0: every event the default's)")
    options = parser.parse_args()

    ensure_binary()
    workdir = Path(tempfile.mkdtemp(prefix="herald-bench-"))
    database = workdir / "herald.sqlite"
    cli("user", "create", "--email", "bench@example.com", "--role", "admin", "--password-stdin", database=database, stdin="bench password 1\n")
    app = cli("app", "create", "--name", "Bench", "--platform", "ios", "--platform", "android", database=database).split()[-1]
    key = cli("key", "create", "--app", app, "--scope", "events:write", "--scope", "campaigns:read", "--scope", "campaigns:write",
              database=database).split()[-1]

    log_path = workdir / "server.log"
    log = open(log_path, "w")
    server = subprocess.Popen([str(BINARY), "serve", "--db", str(database), "--port", "0", "--resources", str(ROOT)],
                              stdout=subprocess.PIPE, stderr=log, text=True)
    base = re.search(r"(http://\S+?)/ ", server.stdout.readline()).group(1)
    try:
        api = Client(base, key=key)
        campaigns = []
        for index in range(options.campaigns):
            body = {"app": int(app), "name": f"Bench {index}", "triggers": [{"event": "app_launch"}],
                    "message": {"layout": "modal", "title": {"text": f"Hello {index}"}}}
            status, _, reply = api.request("POST", "/api/v1/campaigns", json.dumps(body).encode())
            campaign = json.loads(reply)["id"]
            api.request("POST", f"/api/v1/campaigns/{campaign}/publish", b"")
            campaigns.append(campaign)

        # Ingestion: 1000-event batches from concurrent client processes (not threads: generating the
        # JSON in Python must not be limited by one interpreter lock).
        now = datetime.now(timezone.utc)
        batches = options.events // BATCH
        shares = [range(client, batches, options.clients) for client in range(options.clients)]
        started = time.perf_counter()
        with multiprocessing.Pool(options.clients) as pool:
            results = pool.starmap(post_batches, [(base, key, campaigns, share, batches, now.timestamp(), options.days, options.random_ids,
                                                   shown_languages(options.languages)) for share in shares])
        duration = time.perf_counter() - started
        accepted = sum(result[0] for result in results)
        latencies = [latency for result in results for latency in result[1]]
        herald_rate = accepted / duration

        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as check:
            stored = check.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        print(f"machine: {os.cpu_count()} cores; database {database} ({database.stat().st_size / 1e6:.0f} MB after load)")
        print(f"ingestion: {accepted:,} events in {duration:.1f} s = {herald_rate:,.0f} events/s "
              f"({options.clients} clients, {BATCH}-event batches, {'random' if options.random_ids else 'time-ordered'} ids, "
              f"{options.languages} languages besides the default; "
              f"batch p50 {percentile(latencies, 0.5):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms, client-side)")
        print(f"durability: {stored:,} events stored for {accepted:,} accepted" + ("" if stored == accepted else "  <-- MISMATCH"))
        if stored != accepted:
            sys.exit(1)

        # Raw SQLite: the same rows into the same table, one process, one commit per batch.
        raw_rate = raw_sqlite_rate(workdir, options.raw_events or options.events, campaigns, now.timestamp(), options.days,
                                   options.random_ids, shown_languages(options.languages))
        print(f"raw SQLite, same rows and schema: {raw_rate:,.0f} events/s; Herald / raw = {herald_rate / raw_rate:.2f} (target >= 0.3)")

        # Reads: stats endpoint and report pages, server time from the request log.
        console = sign_in(base, "bench@example.com", "bench password 1")

        start_day = (now - timedelta(days=options.days - 1)).strftime("%Y-%m-%d")
        end_day = now.strftime("%Y-%m-%d")
        # Fresh connections: the ones from before the load sat idle past the server's 30 s timeout.
        api = Client(base, key=key)
        targets = [
            ("stats endpoint (90 days)", api, f"/api/v1/campaigns/{campaigns[0]}/stats?from={start_day}&to={end_day}"),
            ("report page /reports", console, f"/reports?from={start_day}&to={end_day}"),
            ("report page /campaigns/{id}/report", console, f"/campaigns/{campaigns[0]}/report?from={start_day}&to={end_day}"),
            ("campaign list /campaigns", console, "/campaigns"),
        ]
        log.flush()
        for label, client, path in targets:
            for _ in range(options.repeat):
                status, _, _ = client.request("GET", path)
            time.sleep(0.2)
            times = [float(m.group("ms")) for m in LOG_LINE.finditer(log_path.read_text()) if m.group(3) == path.split("?")[0]]
            recent = times[-options.repeat:]
            print(f"{label}: status {status}, server time p50 {percentile(recent, 0.5):.1f} ms, p99 {percentile(recent, 0.99):.1f} ms "
                  f"over {len(recent)} requests")

        # The split by language shown alone: the stats' query over its own rollup table, in SQLite.
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as check:
            rows = {table: check.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in ("event_rollups", "event_language_rollups")}
            times = []
            for _ in range(options.repeat):
                started = time.perf_counter()
                check.execute(LANGUAGE_SPLIT, (campaigns[0], start_day, end_day, 20)).fetchall()
                times.append((time.perf_counter() - started) * 1000)
        print(f"language split query ({options.days} days, one campaign): p50 {percentile(times, 0.5):.2f} ms, p99 {percentile(times, 0.99):.2f} ms; "
              f"rollup rows: {rows['event_rollups']:,} by platform and detail, {rows['event_language_rollups']:,} by language")
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


if __name__ == "__main__":
    main()
