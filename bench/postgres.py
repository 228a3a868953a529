#!/usr/bin/env python3
"""Herald on PostgreSQL beside Herald on SQLite, as shipped (`make build`), in interleaved rounds:

* ingestion: `--events` events in 1000-event batches from 4 client processes (bench/events.py's load),
  every accepted event then counted in the database;
* the feed: wrk with 64 connections for `--seconds`, 200s of the app's 20-campaign feed, plain and gzip
  (wrk cannot measure Herald's 304s: they declare the length of what they revalidate, RFC 9110 §8.6, and
  wrk's parser then waits for a body that a 304 never has);

each on SQLite, on PostgreSQL with one instance, and on PostgreSQL with two instances sharing the database
(the clients and wrk's connections split between them); and, last in each round, the C reference
(bench/reference/postgres_ingest.c, libpq): the events the one-instance configuration was sent, generated
again the same way, written by one process over one connection into a fresh database made by `herald
migrate`, in the statements Herald's PostgreSQL event store sends, one transaction per 1000 events. Its
stored rows are then checked against Herald's: the same count in every table (but the bitmap chunks, which
depend on the order devices were numbered in), the same rollups, the same devices on each campaign's day.
PostgreSQL is Debian's, started here in a temporary folder on a free loopback port with its default
durability (fsync and synchronous_commit on: a batch's 200 means it is on disk, as SQLite's
synchronous=FULL), and 512 MB of shared buffers. CPU is reported per event and per request for Herald's
processes (or the reference's) and, apart, for PostgreSQL's (its backends do the storing that SQLite does
inside Herald's process).

    python3 bench/postgres.py --events 200000 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from common import ROOT, Client, Server, cli, compile_reference, cpu_seconds, ensure_binary, ensure_wrk, percentile, wrk
from events import BATCH, event_rows, post_batches, reference_figures, shown_languages, write_reference_batch

# The ingestion load: client processes, the days the events' times span, the language versions shown.
CLIENTS = 4
DAYS = 1
LANGUAGES = shown_languages(2)


class Postgres:
    """A PostgreSQL cluster of its own, stopped and removed by `stop`."""

    def __init__(self, folder: Path):
        self.bin = Path(sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name))[-1])
        self.folder = folder
        folder.mkdir()
        self.owner = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        subprocess.run([*self.owner, str(self.bin / "initdb"), "-D", str(folder / "data"), "-U", "herald", "-A", "trust", "-E", "UTF8",
                        "--locale=C.UTF-8"], check=True, capture_output=True)
        subprocess.run([*self.owner, str(self.bin / "pg_ctl"), "-D", str(folder / "data"), "-w", "-l", str(folder / "server.log"), "-o",
                        f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={folder} -c shared_buffers=512MB "
                        "-c max_connections=200", "start"], check=True, capture_output=True)
        self.postmaster = int((folder / "data" / "postmaster.pid").read_text().split()[0])

    def url(self, database: str) -> str:
        return f"postgres://herald@127.0.0.1:{self.port}/{database}?sslmode=disable"

    def sql(self, statement: str, database: str = "postgres") -> str:
        return subprocess.run(["psql", "-qAt", "-v", "ON_ERROR_STOP=1", self.url(database), "-c", statement],
                              check=True, capture_output=True, text=True).stdout.strip()

    def cpu(self) -> float:
        """CPU seconds of the postmaster and every process it started (the backends doing Herald's work)."""
        total = cpu_seconds(self.postmaster)
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                    if int(fields[1]) == self.postmaster:
                        total += cpu_seconds(int(entry.name))
                except (OSError, IndexError, ValueError):
                    pass
        return total

    def stop(self) -> None:
        subprocess.run([*self.owner, str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "fast", "stop"], capture_output=True)


def run_setup(workdir: Path, engine: str, instances: int, index: int, postgres: Postgres | None):
    """A fresh database with an app, a key and 20 published campaigns, and `instances` servers on it."""
    if engine == "sqlite":
        database: str | Path = workdir / f"bench-{index}.sqlite"
        extra: list[str] = []
    else:
        name = f"bench_{index}"
        postgres.sql(f"CREATE DATABASE {name}")
        database = postgres.url(name)
        extra = ["--secret-key", str(workdir / "push.key")]
    app = cli("app", "create", "--name", "Bench", "--platform", "ios", "--platform", "android", database=database).split()[-1]
    key = cli("key", "create", "--app", app, "--scope", "events:write", "--scope", "campaigns:write", "--scope", "feed:read",
              database=database).split()[-1]
    servers = [Server(database, workdir / f"server-{index}-{number}.log", extra=extra) for number in range(instances)]
    api = Client(servers[0].base, key=key)
    campaigns = []
    for number in range(20):
        body = {"app": int(app), "name": f"Bench {number}", "triggers": [{"event": "app_launch"}],
                "message": {"layout": "modal", "title": {"text": f"Hello {number}"}, "body": {"text": "Twenty percent off today."}}}
        _, _, reply = api.request("POST", "/api/v1/campaigns", json.dumps(body).encode())
        campaign = json.loads(reply)["id"]
        api.request("POST", f"/api/v1/campaigns/{campaign}/publish", b"")
        campaigns.append(campaign)
    return database, servers, key, int(app), campaigns


def stored_events(engine: str, database, postgres: Postgres | None) -> int:
    if engine == "sqlite":
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as check:
            return check.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    return int(postgres.sql("SELECT count(*) FROM events", database.split("/")[-1].split("?")[0]))


# What the reference's database must hold as Herald's does for the same events: each table's rows, but the
# bitmap chunks' (how many a day has depends on the order its devices were numbered in, which the clients'
# interleaving decides), and digests of the rollups, of each campaign day's devices (the bitmaps' set bits), and of
# which weeks have a sketch (their registers and chunk counts depend on the numbering too).
TABLES = ("events", "event_ids", "event_rollups", "event_language_rollups", "device_numbers", "device_number_counters",
          "device_bitmaps", "device_sketches", "device_week_sketches")
DIGESTS = {
    "rollups": "SELECT md5(string_agg(r::text, ',' ORDER BY r::text)) FROM event_rollups r",
    "language rollups": "SELECT md5(string_agg(r::text, ',' ORDER BY r::text)) FROM event_language_rollups r",
    "devices a day": "SELECT md5(string_agg(d::text, ',' ORDER BY d::text)) FROM "
                     "(SELECT campaign_id, test, day, sum(bit_count(bits)) FROM device_bitmaps GROUP BY 1, 2, 3) d",
    "sketched weeks": "SELECT md5(string_agg(campaign_id || '/' || test || '/' || week, ',' ORDER BY campaign_id, test, week)) "
                      "FROM device_week_sketches",
}
NUMBERING_DEPENDENT = {"device_bitmaps"}
REFERENCE = "C reference (libpq)"


def stored_rows(postgres: Postgres, name: str) -> dict:
    """Rows in each ingestion table of database `name`, and the digests that must equal Herald's for the same events."""
    counts = postgres.sql("SELECT " + ", ".join(f"(SELECT count(*) FROM {table})" for table in TABLES), name).split("|")
    return {**dict(zip(TABLES, map(int, counts))), **{label: postgres.sql(query, name) for label, query in DIGESTS.items()}}


def client_shares(batches: int) -> list[range]:
    """Each client process's batches: every CLIENTS-th, so they interleave in batch order."""
    return [range(client, batches, CLIENTS) for client in range(CLIENTS)]


def write_sent_events(path: Path, events: int, sent: dict) -> None:
    """The events a configuration's clients sent (`sent`: their clock, app and campaigns), made again as post_batches
    makes them, each client's from its own generator, batch after batch in the order the clients interleave; ids
    are made again too (time-ordered, the same random bits), the rest is the same."""
    batches = events // BATCH
    generators = [random.Random(share.start) for share in client_shares(batches)]
    with open(path, "w") as out:
        for batch in range(batches):
            rows = event_rows(batch, batches, sent["campaigns"], sent["now"], DAYS, generators[batch % CLIENTS], False, LANGUAGES)
            write_reference_batch(out, rows, sent["app"])


def measure(workdir: Path, engine: str, instances: int, index: int, options, postgres: Postgres | None) -> dict:
    database, servers, key, app, campaigns = run_setup(workdir, engine, instances, index, postgres)
    try:
        def cpu() -> tuple[float, float]:
            return sum(cpu_seconds(server.pid) for server in servers), postgres.cpu() if postgres and engine == "postgres" else 0.0

        batches = options.events // BATCH
        now = time.time()
        herald_before, postgres_before = cpu()
        started = time.perf_counter()
        with multiprocessing.Pool(CLIENTS) as pool:
            results = pool.starmap(post_batches, [(servers[number % instances].base, key, campaigns, share, batches, now, DAYS, False,
                                                   LANGUAGES) for number, share in enumerate(client_shares(batches))])
        duration = time.perf_counter() - started
        herald_after, postgres_after = cpu()
        accepted = sum(result[0] for result in results)
        stored = stored_events(engine, database, postgres)
        if stored != accepted:
            raise SystemExit(f"{engine}: {stored:,} events stored for {accepted:,} accepted")
        latencies = [latency for result in results for _, _, latency in result[1]]
        figures = {"events": accepted / duration, "writer_us": (herald_after - herald_before) / accepted * 1e6,
                   "postgres_us": (postgres_after - postgres_before) / accepted * 1e6, "batch_p99": percentile(latencies, 0.99),
                   "sent": {"now": now, "app": app, "campaigns": campaigns}}
        if engine == "postgres":
            figures["rows"] = stored_rows(postgres, database.split("/")[-1].split("?")[0])

        # The feed: each instance gets its share of 64 connections, all at once.
        for label, headers in (("plain", {}), ("gzip", {"Accept-Encoding": "gzip"})):
            sent = {"Authorization": f"Bearer {key}", **headers}
            herald_before, postgres_before = cpu()
            with multiprocessing.Pool(instances) as pool:
                answers = pool.starmap(wrk, [(server.base + "/api/v1/feed", options.seconds, sent, 64 // instances, 1) for server in servers])
            herald_after, postgres_after = cpu()
            if any(answer["failed"] for answer in answers):
                raise SystemExit(f"{engine} feed {label}: {[answer['errors'] for answer in answers]}")
            requests = sum(answer["rps"] for answer in answers)
            if requests == 0:
                raise SystemExit(f"{engine} feed {label}: no requests answered: {answers}")
            figures[f"feed_{label}"] = requests
            figures[f"feed_{label}_us"] = (herald_after - herald_before) / (requests * options.seconds) * 1e6
        return figures
    finally:
        for server in servers:
            server.stop()
        if engine == "postgres":
            postgres.sql(f"DROP DATABASE IF EXISTS bench_{index} WITH (FORCE)")


def reference_round(workdir: Path, tool: Path, index: int, options, postgres: Postgres, sent: dict) -> dict:
    """The C reference into a fresh database made by `herald migrate`, with the events `sent` describes; PostgreSQL's
    CPU is read while the reference waits before and after its batches (its backend still alive)."""
    name = f"bench_{index}"
    postgres.sql(f"CREATE DATABASE {name}")
    rows = workdir / f"rows-{index}.tsv"
    try:
        cli("migrate", database=postgres.url(name))
        write_sent_events(rows, options.events, sent)
        process = subprocess.Popen([str(tool), postgres.url(name), str(rows)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            ready = process.stdout.readline()
            before = postgres.cpu()
            process.stdin.write("\n")
            process.stdin.flush()
            line = process.stdout.readline()
            after = postgres.cpu()
        finally:
            try:
                process.stdin.close()
            except BrokenPipeError:
                pass
            process.wait()
        if process.returncode != 0 or ready.strip() != "ready" or not line.startswith("events="):
            raise SystemExit(f"postgres_ingest failed ({process.returncode}): {ready!r} {line!r}")
        figures = reference_figures(line)
        if (figures["synchronous_commit"], figures["fsync"]) != ("on", "on"):
            raise SystemExit(f"the reference ran without PostgreSQL's default durability: {line}")
        events = int(figures["events"])
        stored = stored_rows(postgres, name)
        if stored["events"] != events or int(figures["stored"]) != events:
            raise SystemExit(f"C reference: {stored['events']:,} events stored ({figures['stored']} said new) for {events:,} written")
        return {"events": figures["rate"], "writer_us": figures["cpu_us"], "postgres_us": (after - before) / events * 1e6,
                "batch_p99": figures["p99"], "rows": stored}
    finally:
        rows.unlink(missing_ok=True)
        postgres.sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def compare_rows(reference: dict, herald: dict) -> str:
    """The reference's stored rows beside Herald's for the same events; a difference where there must be none ends the run."""
    different = [label for label in reference if label not in NUMBERING_DEPENDENT and reference[label] != herald[label]]
    if different:
        raise SystemExit(f"the C reference stored other rows than Herald for the same events ({', '.join(different)}): "
                         f"reference {reference}, Herald {herald}")
    counts = ", ".join(f"{table} {reference[table]:,}" + (f" (Herald {herald[table]:,})" if table in NUMBERING_DEPENDENT else "")
                       for table in TABLES)
    return f"rows as Herald's for the same events: {counts}; {', '.join(DIGESTS)} identical"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=5, help="seconds of wrk for each feed figure")
    options = parser.parse_args()
    ensure_binary()
    ensure_wrk()
    configurations = [("sqlite", 1), ("postgres", 1), ("postgres", 2)]
    results: dict[str, list[dict]] = {f"{engine} ×{instances}": [] for engine, instances in configurations}
    results[REFERENCE] = []
    with tempfile.TemporaryDirectory(prefix="herald-bench-postgres-") as temporary:
        workdir = Path(temporary)
        os.chmod(workdir, 0o755)
        tool = compile_reference("postgres_ingest", workdir, "-I" + subprocess.run(
            ["pg_config", "--includedir"], check=True, capture_output=True, text=True).stdout.strip(), "-lpq")
        postgres = Postgres(workdir / "postgres")
        try:
            index = 0
            for round_number in range(1, options.rounds + 1):
                for engine, instances in configurations:
                    index += 1
                    figures = measure(workdir, engine, instances, index, options, postgres)
                    results[f"{engine} ×{instances}"].append(figures)
                    print(f"round {round_number} {engine} ×{instances}: {figures['events']:,.0f} events/s "
                          f"(Herald {figures['writer_us']:.1f} µs + PostgreSQL {figures['postgres_us']:.1f} µs CPU/event, batch p99 "
                          f"{figures['batch_p99']:.0f} ms); feed 200 {figures['feed_plain']:,.0f} req/s ({figures['feed_plain_us']:.1f} µs), "
                          f"gzip 200 {figures['feed_gzip']:,.0f} req/s ({figures['feed_gzip_us']:.1f} µs)", flush=True)
                index += 1
                herald = results["postgres ×1"][-1]
                figures = reference_round(workdir, tool, index, options, postgres, herald["sent"])
                results[REFERENCE].append(figures)
                print(f"round {round_number} {REFERENCE}: {figures['events']:,.0f} events/s (C {figures['writer_us']:.1f} µs + PostgreSQL "
                      f"{figures['postgres_us']:.1f} µs CPU/event, batch p99 {figures['batch_p99']:.0f} ms); "
                      f"{compare_rows(figures['rows'], herald['rows'])}", flush=True)
        finally:
            postgres.stop()
    print("\n| configuration | events/s | CPU µs/event, Herald (or C) + PostgreSQL | batch p99 | feed 200 req/s (µs) | feed gzip 200 req/s (µs) |")
    print("|---|---|---|---|---|---|")
    def joined(runs: list[dict], form) -> str:
        return " / ".join(form(run) for run in runs)

    for label, runs in results.items():
        feed = label != REFERENCE
        cells = [
            joined(runs, lambda r: format(r["events"], ",.0f")),
            joined(runs, lambda r: "%.1f + %.1f" % (r["writer_us"], r["postgres_us"])),
            joined(runs, lambda r: "%.0f ms" % r["batch_p99"]),
            joined(runs, lambda r: "%s (%.1f)" % (format(r["feed_plain"], ",.0f"), r["feed_plain_us"])) if feed else "—",
            joined(runs, lambda r: "%s (%.1f)" % (format(r["feed_gzip"], ",.0f"), r["feed_gzip_us"])) if feed else "—",
        ]
        print("| " + " | ".join([label, *cells]) + " |")
    pairs = list(zip(results["postgres ×1"], results[REFERENCE]))
    print("\nPostgreSQL ×1 / C reference, each round: events/s " + " / ".join(f"{h['events'] / c['events']:.2f}" for h, c in pairs)
          + "; CPU per event, PostgreSQL's included " + " / ".join(
              f"{(h['writer_us'] + h['postgres_us']) / (c['writer_us'] + c['postgres_us']):.2f}" for h, c in pairs))

if __name__ == "__main__":
    main()
