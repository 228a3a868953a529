#!/usr/bin/env python3
"""Memory and start benchmark: resident memory (VmRSS, and the peak VmHWM, from /proc/PID/status) of the
release server idle on a fresh database, idle with a feed of 100 published campaigns, during and after a
`wrk -t2 -c64` load on GET /api/v1/feed (the 200 path), and during and after an ingestion load (4 client
processes posting 1000-event batches of time-ordered UUIDv7 ids to POST /api/v1/events); then the time
from spawning the process to the first 200 from /readyz, 10 times on the database just loaded.
Targets: RSS < 100 MB under load; start < 300 ms on an existing database.
Run from the repository root:  python3 bench/memory.py [--seconds 10]
It installs wrk from Debian if missing, builds the release binary if needed, and uses a temporary database.
The server runs at its default log level (info, one line per request, to a file)."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (BenchError, Client, Server, cli, ensure_binary, ensure_wrk, feed_campaign, memory, percentile,  # noqa: E402
                    uuid7, verdict, wrk)

RSS_TARGET_MB = 100.0
START_TARGET_MS = 300.0
STARTS = 10
EVENT_KINDS = [("impression", {})] * 6 + [("click", {"action": "primary"}), ("dismiss", {"dismissType": "click"}),
                                          ("error", {"errorCode": "image_fetch"}), ("conversion", {"event": "purchase"})]


class Sampler:
    """Reads a process's VmRSS every 100 ms on a thread and keeps the largest."""

    def __init__(self, pid: int):
        self.pid, self.largest, self.running = pid, 0.0, True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while self.running:
            self.largest = max(self.largest, memory(self.pid)["VmRSS"])
            time.sleep(0.1)

    def stop(self) -> float:
        self.running = False
        self.thread.join()
        return self.largest


def ingest(base: str, key: str, campaigns: list[int], seconds: float, seed: int, results) -> None:
    """One client process: posts 1000-event batches until `seconds` have passed, as a delivery client
    would (ids made at the time of the event, so they are time-ordered)."""
    try:
        client = Client(base, key=key)
        accepted, latencies, counter = 0, [], seed
        begun_all = time.perf_counter()
        deadline = begun_all + seconds
        while time.perf_counter() < deadline:
            events = []
            for _ in range(1000):
                counter += 7919
                milliseconds = time.time_ns() // 1_000_000
                kind, extra = EVENT_KINDS[counter % len(EVENT_KINDS)]
                events.append({"id": uuid7(milliseconds), "type": kind, "campaignId": campaigns[counter % len(campaigns)],
                               "occurredAt": datetime.fromtimestamp(milliseconds / 1000, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                               "platform": "ios" if counter % 3 else "android", "installationId": f"iid-{counter % 50_000}", **extra})
            body = json.dumps({"events": events}).encode()
            begun = time.perf_counter()
            _, _, reply = client.request("POST", "/api/v1/events", body)
            latencies.append((time.perf_counter() - begun) * 1000)
            answer = json.loads(reply)
            if answer["accepted"] != len(events):
                raise BenchError(f"a batch kept {answer['accepted']} of {len(events)} events: {reply[:300]!r}")
            accepted += answer["accepted"]
        client.close()
        results.put((accepted, latencies, time.perf_counter() - begun_all, None))
    except BaseException as error:  # noqa: BLE001 - reported by the parent
        results.put((0, [], 0.0, f"{type(error).__name__}: {error}"))


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def settle(pid: int, seconds: float = 2.0) -> dict[str, float]:
    time.sleep(seconds)
    return memory(pid)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10, help="length of each load")
    parser.add_argument("--clients", type=int, default=4, help="ingestion client processes")
    options = parser.parse_args()

    ensure_wrk()
    ensure_binary()
    workdir = Path(tempfile.mkdtemp(prefix="herald-memory-bench-"))
    server = None
    rows: list[tuple[str, str, str, str, str]] = []

    def rss_row(label: str, megabytes: float, detail: str = "") -> None:
        rows.append((label, f"{megabytes:.1f} MB", f"< {RSS_TARGET_MB:.0f} MB", verdict(megabytes < RSS_TARGET_MB), detail))

    try:
        database = workdir / "herald.sqlite"
        app = cli("app", "create", "--name", "Bench", "--platform", "ios", "--platform", "android", database=database).split()[-1]
        key = cli("key", "create", "--app", app, "--scope", "feed:read", "--scope", "campaigns:write", "--scope", "events:write",
                  database=database).split()[-1]

        progress("starting the server on a fresh database")
        server = Server(database, workdir / "server.log")
        server.wait_ready()
        idle = settle(server.pid)
        rss_row("idle, fresh database", idle["VmRSS"])

        progress("publishing 100 campaigns (those of bench/feed.py)")
        api = Client(server.base, key=key)
        campaigns = []
        for index in range(100):
            _, _, reply = api.request("POST", "/api/v1/campaigns", json.dumps(feed_campaign(index, int(app))).encode())
            campaigns.append(json.loads(reply)["id"])
            api.request("POST", f"/api/v1/campaigns/{campaigns[-1]}/publish", b"")
        _, _, feed = api.request("GET", "/api/v1/feed")
        api.close()
        loaded = settle(server.pid)
        rss_row(f"idle, feed of 100 campaigns ({len(feed) / 1024:.0f} KB) served once", loaded["VmRSS"])

        progress(f"feed load for {options.seconds} s")
        sampler = Sampler(server.pid)
        load = wrk(f"{server.base}/api/v1/feed", options.seconds, {"Authorization": f"Bearer {key}"})
        during = sampler.stop()
        if load["failed"]:
            raise BenchError(f"wrk saw errors on the feed: {load['errors']}")
        after = settle(server.pid)
        rss_row(f"during feed load, wrk -t2 -c64 {options.seconds} s (largest sample)", during,
                f"{load['rps']:,.0f} req/s, p99 {load['p99']:.1f} ms")
        rss_row("after feed load, 2 s idle", after["VmRSS"], f"peak so far VmHWM {after['VmHWM']:.1f} MB")

        progress(f"ingestion load for {options.seconds} s")
        sampler = Sampler(server.pid)
        spawn = multiprocessing.get_context("spawn")
        results = spawn.Queue()
        clients = [spawn.Process(target=ingest, args=(server.base, key, campaigns, options.seconds, seed, results),
                                 daemon=True)
                   for seed in range(options.clients)]
        for client in clients:
            client.start()
        outcomes = [results.get(timeout=options.seconds + 300) for _ in clients]
        for client in clients:
            client.join()
        during = sampler.stop()
        errors = [error for _, _, _, error in outcomes if error]
        if errors:
            raise BenchError(f"ingestion failed: {errors[0]}")
        accepted = sum(outcome[0] for outcome in outcomes)
        latencies = [value for outcome in outcomes for value in outcome[1]]
        duration = max(outcome[2] for outcome in outcomes)
        after = settle(server.pid)
        rss_row(f"during ingestion, {options.clients} clients x 1000-event batches (largest sample)", during,
                f"{accepted:,} events, {accepted / duration:,.0f} events/s, batch p99 {percentile(latencies, 0.99):.0f} ms client-side")
        rss_row("after ingestion, 2 s idle", after["VmRSS"], f"peak over the whole run VmHWM {after['VmHWM']:.1f} MB")
        progress("stopping the server")
        server.stop()
        server = None

        progress(f"starting {STARTS} times on the loaded database")
        size = sum(path.stat().st_size for path in workdir.glob("herald.sqlite*")) / 1e6
        starts, announced = [], []
        for attempt in range(STARTS):
            server = Server(database, workdir / f"start-{attempt}.log")
            starts.append(server.wait_ready() * 1000)
            announced.append(server.announced * 1000)
            if attempt == 0:
                restarted = settle(server.pid, 1.0)
            server.stop()
            server = None
        median, largest = statistics.median(starts), max(starts)
        rss_row("idle after a restart on that database", restarted["VmRSS"])
        rows.append((f"start to first 200 from /readyz, median of {STARTS} ({size:.1f} MB database)", f"{median:.0f} ms",
                     f"< {START_TARGET_MS:.0f} ms", verdict(median < START_TARGET_MS), "all: " + ", ".join(f"{value:.0f}" for value in starts)))
        rows.append((f"start to first 200 from /readyz, largest of {STARTS}", f"{largest:.0f} ms",
                     f"< {START_TARGET_MS:.0f} ms", verdict(largest < START_TARGET_MS),
                     f"spawn to the printed URL: median {statistics.median(announced):.0f} ms"))

        print(f"machine: {os.cpu_count()} cores; release server on loopback, load generators on the same cores; "
              f"RSS is VmRSS from /proc/PID/status (MB = 10^6 bytes)\n")
        width = max(len(row[0]) for row in rows)
        print(f"{'measure':<{width}}  {'figure':>9}  {'target':<9} {'':<6}  context")
        print("-" * (width + 40))
        for label, figure, target, met, detail in rows:
            print(f"{label:<{width}}  {figure:>9}  {target:<9} {met:<6}  {detail}")
        return 0
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        if server:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
