#!/usr/bin/env python3
"""Ingestion and report benchmark. In interleaved rounds (`--rounds`, the order alternating), loads N
events (default 10 million) into a fresh Herald, run as shipped, through POST /api/v1/events in
1000-event batches from 4 concurrent client processes, and checks every accepted event is stored; and
the same kind of rows into a fresh database of the same schema with the C reference
(bench/reference/sqlite_ingest.c: prepared inserts, Herald's pragmas, the rollups and device rows
written as Herald writes them, one transaction per 1000 rows). Each side: events/s, CPU per event (the
server's from /proc; the reference's own), batch p50/p99, and Herald's rate in each `--window` of events
(flat if ingestion does not slow as the table grows). Then times the stats endpoint and the report pages
over the last round's database, server time from Herald's request log.

Event ids are UUIDv7 (time-ordered), as Herald's delivery client makes them; `--random-ids` sends
random (v4) UUIDs instead.
Run from the repository root:  python3 bench/events.py [--events 10000000] [--rounds 3]
It builds the release binary if needed and uses a temporary folder."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sqlite3
import subprocess
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from common import ROOT, Client, Server, cli, compile_reference, cpu_seconds, ensure_binary, percentile, sign_in


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
    """One client process: posts its share of the batches; returns (accepted, [(finished at, accepted, latency ms)] per batch)."""
    client = Client(base, key=key)
    generator = random.Random(share.start)
    accepted, results = 0, []
    for batch in share:
        items = ",".join(f'{{"id":"{id}","type":"{kind}","campaignId":{campaign},"occurredAt":"{occurred}","platform":"{platform}",'
                         f'"installationId":"{installation}"{extra}' + (f',"language":"{language}"}}' if language else "}")
                         for id, kind, campaign, occurred, platform, installation, extra, language in
                         event_rows(batch, batches, campaigns, now, days, generator, random_ids, languages))
        started = time.perf_counter()
        status, _, reply = client.request("POST", "/api/v1/events", f'{{"events":[{items}]}}'.encode())
        finished = time.perf_counter()
        if status != 200:
            raise SystemExit(f"POST /api/v1/events answered {status}: {reply[:300]!r}")
        count = json.loads(reply)["accepted"]
        accepted += count
        results.append((finished, count, (finished - started) * 1000))
    return accepted, results


DETAILS = {"": "", ',"action":"primary"': "primary", ',"dismissType":"auto"': "auto", ',"errorCode":"image_fetch"': "image_fetch",
           ',"event":"purchase"': "purchase"}


def write_reference_batch(out, rows: list, app: int = 1) -> None:
    """One batch of `event_rows` as the C references read them (bench/reference/reference.h: tab-separated, Herald's stored forms)."""
    received = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.000")
    for id, kind, campaign, occurred, platform, installation, extra, language in rows:
        out.write("\t".join((id, str(app), str(campaign), kind, occurred.replace("T", " ").replace("Z", ".000"), occurred[:10], platform,
                             installation, DETAILS[extra], language or "", "0", received)) + "\n")


def write_reference_rows(path: Path, events: int, campaigns: list[int], now: float, days: int, random_ids: bool, languages: list) -> None:
    """The same kind of rows as the clients send, as the C reference reads them."""
    generator = random.Random(7)
    batches = events // BATCH
    with open(path, "w") as out:
        for batch in range(batches):
            write_reference_batch(out, event_rows(batch, batches, campaigns, now, days, generator, random_ids, languages))


def reference_figures(line: str) -> dict:
    """A reference's figures line (`events=N seconds=S cpu_seconds=C batch_p50_ms=P batch_p99_ms=Q …`) as events/s,
    its own CPU µs per event and batch p50/p99; every field of the line is kept under its own name too."""
    fields = dict(item.split("=", 1) for item in line.split())
    events, seconds, cpu = int(fields["events"]), float(fields["seconds"]), float(fields["cpu_seconds"])
    return {**fields, "rate": events / seconds, "cpu_us": cpu / events * 1e6, "p50": float(fields["batch_p50_ms"]),
            "p99": float(fields["batch_p99_ms"]), "windows": []}


# What migration 0013 dropped, put back by `--installation-index` to measure what it cost.
INSTALLATION_INDEX = "CREATE INDEX events_by_installation ON events(installation_id) WHERE installation_id IS NOT NULL"


def add_installation_index(database: Path) -> None:
    with sqlite3.connect(database) as connection:
        connection.execute(INSTALLATION_INDEX)


def reference_round(workdir: Path, tool: Path, rows: Path, index: int, installation_index: bool) -> dict:
    """The C reference (bench/reference/sqlite_ingest.c) into a fresh database made by `herald migrate`."""
    database = workdir / f"reference-{index}.sqlite"
    cli("migrate", database=database)
    if installation_index:
        add_installation_index(database)
    output = subprocess.run([str(tool), str(database), str(rows)], check=True, capture_output=True, text=True).stdout
    for suffix in ("", "-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    return reference_figures(output)


def herald_round(workdir: Path, options, now: datetime, index: int, keep: bool) -> dict:
    """A fresh database and server as shipped (`info` logging), the campaigns made through the API, then the
    load from concurrent client processes (not threads: generating the JSON in Python must not be limited by
    one interpreter lock). Returns the figures; with `keep`, the server and what the reads need too."""
    database = workdir / f"herald-{index}.sqlite"
    cli("user", "create", "--email", "bench@example.com", "--role", "admin", "--password-stdin", database=database, stdin="bench password 1\n")
    app = cli("app", "create", "--name", "Bench", "--platform", "ios", "--platform", "android", database=database).split()[-1]
    key = cli("key", "create", "--app", app, "--scope", "events:write", "--scope", "campaigns:read", "--scope", "campaigns:write",
              database=database).split()[-1]
    if options.installation_index:
        add_installation_index(database)
    server = Server(database, workdir / f"server-{index}.log")
    try:
        api = Client(server.base, key=key)
        campaigns = []
        for number in range(options.campaigns):
            body = {"app": int(app), "name": f"Bench {number}", "triggers": [{"event": "app_launch"}],
                    "message": {"layout": "modal", "title": {"text": f"Hello {number}"}}}
            status, _, reply = api.request("POST", "/api/v1/campaigns", json.dumps(body).encode())
            campaign = json.loads(reply)["id"]
            api.request("POST", f"/api/v1/campaigns/{campaign}/publish", b"")
            campaigns.append(campaign)

        batches = options.events // BATCH
        shares = [range(client, batches, options.clients) for client in range(options.clients)]
        cpu_before = cpu_seconds(server.pid)
        started = time.perf_counter()
        with multiprocessing.Pool(options.clients) as pool:
            results = pool.starmap(post_batches, [(server.base, key, campaigns, share, batches, now.timestamp(), options.days,
                                                   options.random_ids, shown_languages(options.languages)) for share in shares])
        duration = time.perf_counter() - started
        cpu = cpu_seconds(server.pid) - cpu_before
        accepted = sum(result[0] for result in results)
        batches_done = sorted(batch for result in results for batch in result[1])
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as check:
            stored = check.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        if stored != accepted:
            raise SystemExit(f"durability: {stored:,} events stored for {accepted:,} accepted")
        # Events/s in each window of `--window` events, in the order they were stored: flat if ingestion
        # does not slow as the table grows.
        windows, total, window_start, window_time = [], 0, 0, started
        for finished, count, _ in batches_done:
            total += count
            if total - window_start >= options.window:
                windows.append((total, (total - window_start) / (finished - window_time)))
                window_start, window_time = total, finished
        latencies = [latency for _, _, latency in batches_done]
        figures = {"rate": accepted / duration, "cpu_us": cpu / accepted * 1e6, "p50": percentile(latencies, 0.5),
                   "p99": percentile(latencies, 0.99), "windows": windows, "size_mb": database.stat().st_size / 1e6}
        if keep:
            figures.update(server=server, key=key, campaigns=campaigns, database=database)
        else:
            server.stop()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{database}{suffix}").unlink(missing_ok=True)
        return figures
    except BaseException:
        server.stop()
        raise


def show(label: str, figures: dict) -> None:
    print(f"  {label:<10} {figures['rate']:>9,.0f} events/s  {figures['cpu_us']:>6.1f} µs CPU/event  "
          f"batch p50 {figures['p50']:>6.1f} ms  p99 {figures['p99']:>6.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of Herald and the C reference")
    parser.add_argument("--window", type=int, default=1_000_000, help="events per window of the scaling figures")
    parser.add_argument("--campaigns", type=int, default=20)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--days", type=int, default=90, help="events occur over this many past days")
    parser.add_argument("--random-ids", action="store_true", help="random (v4) event ids instead of time-ordered (v7)")
    parser.add_argument("--repeat", type=int, default=30, help="requests per timed page")
    parser.add_argument("--languages", type=int, default=5, help="language versions shown besides the default (0: every event the default's)")
    parser.add_argument("--installation-index", action="store_true",
                        help="put back the index by installation that migration 0013 dropped, on both sides, to measure its cost")
    options = parser.parse_args()

    ensure_binary()
    workdir = Path(tempfile.mkdtemp(prefix="herald-bench-"))
    tool = compile_reference("sqlite_ingest", workdir, "-lsqlite3")
    now = datetime.now(timezone.utc)
    rows = workdir / "rows.tsv"
    write_reference_rows(rows, options.events, list(range(1, options.campaigns + 1)), now.timestamp(), options.days, options.random_ids,
                         shown_languages(options.languages))

    print(f"machine: {os.cpu_count()} cores; {options.events:,} events a round, {options.clients} clients, {BATCH}-event batches, "
          f"{'random' if options.random_ids else 'time-ordered'} ids, {options.languages} languages besides the default"
          + ("; with the index by installation" if options.installation_index else ""))
    herald_runs, reference_runs, kept = [], [], None
    for index in range(options.rounds):
        last = index == options.rounds - 1
        # The order alternates, so neither side always runs on a warmer (or more fragmented) disk.
        for side in (("herald", "reference") if index % 2 == 0 else ("reference", "herald")):
            if side == "herald":
                figures = herald_round(workdir, options, now, index, keep=last)
                herald_runs.append(figures)
                kept = figures if last else kept
            else:
                reference_runs.append(reference_round(workdir, tool, rows, index, options.installation_index))
        print(f"round {index + 1}:")
        show("Herald", herald_runs[-1])
        show("C", reference_runs[-1])
        print(f"  Herald / C: {herald_runs[-1]['rate'] / reference_runs[-1]['rate']:.2f}; Herald events/s by "
              f"{options.window:,}-event window: " + ", ".join(f"{rate:,.0f}" for _, rate in herald_runs[-1]["windows"]))

    def median(runs: list[dict], field: str) -> float:
        return percentile([run[field] for run in runs], 0.5)
    print(f"median of {options.rounds}: Herald {median(herald_runs, 'rate'):,.0f} events/s ({median(herald_runs, 'cpu_us'):.1f} µs CPU/event, "
          f"batch p99 {median(herald_runs, 'p99'):.1f} ms); C {median(reference_runs, 'rate'):,.0f} events/s "
          f"({median(reference_runs, 'cpu_us'):.1f} µs CPU/event); Herald / C = {median(herald_runs, 'rate') / median(reference_runs, 'rate'):.2f} "
          f"(target >= 0.8); database after the last round {kept['size_mb']:.0f} MB")

    # Reads: the stats endpoint and report pages over the last round's database, server time from the request log.
    server, key, campaigns = kept["server"], kept["key"], kept["campaigns"]
    try:
        console = sign_in(server.base, "bench@example.com", "bench password 1")
        start_day = (now - timedelta(days=options.days - 1)).strftime("%Y-%m-%d")
        end_day = now.strftime("%Y-%m-%d")
        # Fresh connections: the ones from before the load sat idle past the server's 30 s timeout.
        api = Client(server.base, key=key)
        targets = [
            ("stats endpoint (90 days)", api, f"/api/v1/campaigns/{campaigns[0]}/stats?from={start_day}&to={end_day}"),
            ("report page /reports", console, f"/reports?from={start_day}&to={end_day}"),
            ("report page /campaigns/{id}/report", console, f"/campaigns/{campaigns[0]}/report?from={start_day}&to={end_day}"),
            ("campaign list /campaigns", console, "/campaigns"),
        ]
        for label, client, path in targets:
            offset = server.log_offset()
            for _ in range(options.repeat):
                status, _, _ = client.request("GET", path)
            time.sleep(0.2)
            recent = server.server_times(offset, path.split("?")[0])
            print(f"{label}: status {status}, server time p50 {percentile(recent, 0.5):.1f} ms, p99 {percentile(recent, 0.99):.1f} ms "
                  f"over {len(recent)} requests")

        # The split by language shown alone: the stats' query over its own rollup table, in SQLite.
        with sqlite3.connect(f"file:{kept['database']}?mode=ro", uri=True) as check:
            counts = {table: check.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in ("event_rollups", "event_language_rollups")}
            times = []
            for _ in range(options.repeat):
                started = time.perf_counter()
                check.execute(LANGUAGE_SPLIT, (campaigns[0], start_day, end_day, 20)).fetchall()
                times.append((time.perf_counter() - started) * 1000)
        print(f"language split query ({options.days} days, one campaign): p50 {percentile(times, 0.5):.2f} ms, p99 {percentile(times, 0.99):.2f} ms; "
              f"rollup rows: {counts['event_rollups']:,} by platform and detail, {counts['event_language_rollups']:,} by language")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
