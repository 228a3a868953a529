#!/usr/bin/env python3
"""Export benchmark: GET /campaigns/export of N campaigns (default 100,000, realistic documents of every
layout written straight into a fresh database) on the release server, as shipped. It reports the time
and size of one export, the server's peak resident memory (VmHWM from /proc/PID/status) while one and
then five exports run at once, and the feed's latency (p50/p99 of back-to-back GET /api/v1/feed on
another connection) alone and during the five exports.
Target: the export streams with RSS under 150 MB; exports do not starve the feed.
Run from the repository root:  python3 bench/export.py [--campaigns 100000]
It builds the release binary if needed and uses a temporary database."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BenchError, Client, Server, campaign, cli, ensure_binary, memory, percentile, sign_in, verdict  # noqa: E402

RSS_TARGET_MB = 150.0


def seed(database: Path, app: int, count: int) -> None:
    """Writes `count` draft campaigns (and their first revision) in one transaction, as the store would."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.000")
    with sqlite3.connect(database) as db:
        rows = []
        for index in range(count):
            document = campaign(index, app)
            rows.append((index + 1, app, document["name"], document["message"]["layout"], document.get("priority", 5),
                         json.dumps(document, separators=(",", ":"), sort_keys=True), now, now))
        db.executemany(
            "INSERT INTO campaigns (id, app_id, name, state, layout, priority, test_on_device, document, revision, created_at, "
            "updated_at, updated_by) VALUES (?, ?, ?, 'draft', ?, ?, 0, ?, 1, ?, ?, 'bench')", rows)
        db.executemany(
            "INSERT INTO campaign_revisions (campaign_id, revision, state, document, author, created_at) VALUES (?, 1, 'draft', ?, 'bench', ?)",
            [(row[0], row[5], row[6]) for row in rows])


def export(base: str, cookie: str, results: list, chunk: int = 65536) -> None:
    """Downloads the export once, reading as fast as it arrives; appends (seconds, bytes, campaigns)."""
    client = Client(base, cookie=cookie)
    started = time.perf_counter()
    client.connection.request("GET", "/campaigns/export", headers=client.headers)
    response = client.connection.getresponse()
    if response.status != 200:
        raise BenchError(f"export answered {response.status}")
    body = bytearray()
    while piece := response.read(chunk):
        body += piece
    seconds = time.perf_counter() - started
    results.append((seconds, len(body), len(json.loads(body)["campaigns"])))
    client.close()


def feed_latencies(base: str, key: str, stop: threading.Event, into: list) -> None:
    client = Client(base, key=key)
    while not stop.is_set():
        started = time.perf_counter()
        client.request("GET", "/api/v1/feed")
        into.append((time.perf_counter() - started) * 1000)
    client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaigns", type=int, default=100_000)
    options = parser.parse_args()
    ensure_binary()
    with tempfile.TemporaryDirectory(prefix="herald-bench-export-") as folder:
        database = Path(folder) / "herald.sqlite"
        cli("migrate", database=database)
        cli("user", "create", "--email", "bench@example.com", "--role", "admin", "--password-stdin",
            database=database, stdin="bench passphrase\n")
        app = int(cli("app", "create", "--name", "Shop", "--platform", "ios", database=database).split()[-1])
        key = cli("key", "create", "--app", str(app), "--name", "bench", "--scope", "feed:read", database=database).split()[-1]
        started = time.perf_counter()
        seed(database, app, options.campaigns)
        print(f"seeded {options.campaigns:,} campaigns in {time.perf_counter() - started:.1f} s "
              f"({database.stat().st_size / 1e6:.0f} MB database)")
        server = Server(database, Path(folder) / "server.log")
        try:
            server.wait_ready()
            cookie = sign_in(server.base, "bench@example.com", "bench passphrase").headers["Cookie"]

            idle = memory(server.pid)
            alone: list[float] = []
            stop = threading.Event()
            probe = threading.Thread(target=feed_latencies, args=(server.base, key, stop, alone))
            probe.start()
            time.sleep(3)
            stop.set()
            probe.join()

            one: list = []
            export(server.base, cookie, one)
            after_one = memory(server.pid)

            during: list[float] = []
            stop = threading.Event()
            probe = threading.Thread(target=feed_latencies, args=(server.base, key, stop, during))
            probe.start()
            five: list = []
            downloads = [threading.Thread(target=export, args=(server.base, cookie, five)) for _ in range(5)]
            for thread in downloads:
                thread.start()
            for thread in downloads:
                thread.join()
            stop.set()
            probe.join()
            after_five = memory(server.pid)
        finally:
            server.stop()

    seconds, size, count = one[0]
    print(f"one export: {count:,} campaigns, {size / 1e6:.1f} MB in {seconds:.1f} s ({size / 1e6 / seconds:.1f} MB/s)")
    print(f"five at once: {max(r[0] for r in five):.1f} s for the slowest; every file complete: "
          f"{all(r[2] == options.campaigns for r in five)}")
    print(f"RSS: idle {idle['VmRSS']:.1f} MB, peak after one export {after_one['VmHWM']:.1f} MB, "
          f"peak after five at once {after_five['VmHWM']:.1f} MB "
          f"(target < {RSS_TARGET_MB:.0f} MB: {verdict(after_five['VmHWM'] < RSS_TARGET_MB)})")
    print(f"feed alone: p50 {percentile(alone, 0.5):.2f} ms, p99 {percentile(alone, 0.99):.2f} ms ({len(alone)} requests); "
          f"during five exports: p50 {percentile(during, 0.5):.2f} ms, p99 {percentile(during, 0.99):.2f} ms ({len(during)} requests)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
