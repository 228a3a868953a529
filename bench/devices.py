#!/usr/bin/env python3
"""Unique-device reads against the number of devices: the stats endpoint and the campaign report over
90 days, for a campaign seen by `--devices` devices a day (default 10 k, 100 k, 1 M and 3 M).

What a report costs grows with devices, not with events: the rollups are a few rows per day whatever
the volume, and unique devices are the union of each day's device bitmaps (migration 0015), a
512-byte chunk per 4096 devices per day. So this writes those tables straight, as Herald writes them
(the issue allows generated data for this): one app, one published campaign made through the API, and
for each of `--days` days the campaign's rollups and its bitmap chunks, each device of a population of
4 × devices seen on a day with probability 1/4 (two random words ANDed). Then Herald, run as shipped,
answers `--repeat` requests of each; server time from its request log, p50 and p99. The days' device
sketches (migration 0017) are made by Herald itself: the migration is undone and applied again over the
written bitmaps. The stats endpoint's unique devices are checked against the bitmaps' true union: exact
while the range has at most 1024 chunk rows, within 6 % and marked estimated past that.

Run from the repository root:  python3 bench/devices.py [--devices 10000 100000 1000000 3000000]
It builds the release binary if needed and uses a temporary folder."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from common import BenchError, Client, Server, cli, ensure_binary, percentile, sign_in

CHUNK_BITS = 4096
EXACT_CHUNK_LIMIT = 1024  # DeviceSketches.exactChunkLimit: past it, unique devices are estimated


def check_devices(totals: dict, rows: int, distinct: int) -> tuple[int, bool, float]:
    """The stats endpoint's unique devices against the `distinct` devices written in `rows` chunk rows:
    estimated exactly when the rows pass the exact limit, then within 6 %, or equal when counted.
    Returns the figure, whether it is estimated, and its relative error."""
    counted, estimated = totals["uniqueDevices"], totals["uniqueDevicesEstimated"]
    if estimated != (rows > EXACT_CHUNK_LIMIT):
        raise BenchError(f"{rows:,} chunk rows gave uniqueDevicesEstimated {estimated}")
    error = (counted - distinct) / distinct
    if (not estimated and counted != distinct) or abs(error) > 0.06:
        raise BenchError(f"the stats endpoint said {counted:,} devices ({'estimated' if estimated else 'counted'}), not {distinct:,}")
    return counted, estimated, error


def fill(database: Path, campaign: int, devices: int, days: list[str]) -> tuple[int, int]:
    """The campaign's rollups and device bitmaps for `days`; returns the chunk rows written and the
    distinct devices over all of them (the union's bits), which the stats endpoint must answer."""
    population = devices * 4
    chunks = (population + CHUNK_BITS - 1) // CHUNK_BITS
    rows = 0
    union = [0] * chunks
    with sqlite3.connect(database) as connection:
        for day in days:
            for platform, share in (("ios", 2), ("android", 1)):
                for kind, detail, per_device in (("impression", "", 3), ("click", "primary", 1), ("dismiss", "auto", 1)):
                    connection.execute("INSERT INTO event_rollups (campaign_id, day, platform, test, type, detail, count) VALUES (?, ?, ?, 0, ?, ?, ?)",
                                       (campaign, day, platform, kind, detail, devices * per_device * share // 3))
            bitmaps = []
            for chunk in range(chunks):
                words = int.from_bytes(os.urandom(512), "little") & int.from_bytes(os.urandom(512), "little")
                union[chunk] |= words
                bitmaps.append((campaign, day, chunk, words.to_bytes(512, "little")))
            connection.executemany("INSERT INTO device_bitmaps (campaign_id, test, kind, day, chunk, bits) VALUES (?, 0, 'seen', ?, ?, ?)", bitmaps)
            rows += len(bitmaps)
    return rows, sum(words.bit_count() for words in union)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", type=int, nargs="+", default=[10_000, 100_000, 1_000_000, 3_000_000])
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--repeat", type=int, default=40)
    options = parser.parse_args()
    ensure_binary()
    workdir = Path(tempfile.mkdtemp(prefix="herald-devices-bench-"))
    today = datetime.now(timezone.utc).date()
    days = [(today - timedelta(days=offset)).isoformat() for offset in range(options.days - 1, -1, -1)]
    print(f"{options.days} days, one campaign; server time from the request log over {options.repeat} requests each")
    print("| devices a day | chunk rows | distinct devices | stats endpoint says | stats endpoint p50 / p99 ms | campaign report p50 / p99 ms "
          "| migrations 0017, 0018, 0024 (sketches from the bitmaps) |")
    print("|---|---|---|---|---|---|---|")
    for devices in options.devices:
        database = workdir / f"devices-{devices}.sqlite"
        cli("user", "create", "--email", "bench@example.com", "--role", "admin", "--password-stdin", database=database, stdin="bench password 1\n")
        app = cli("app", "create", "--name", "Bench", "--platform", "ios", "--platform", "android", database=database).split()[-1]
        key = cli("key", "create", "--app", app, "--scope", "campaigns:read", "--scope", "campaigns:write", database=database).split()[-1]
        server = Server(database, workdir / f"setup-{devices}.log")
        try:
            api = Client(server.base, key=key)
            body = {"app": int(app), "name": "Bench", "triggers": [{"event": "app_launch"}], "message": {"layout": "modal", "title": {"text": "Hello"}}}
            _, _, reply = api.request("POST", "/api/v1/campaigns", json.dumps(body).encode())
            campaign = json.loads(reply)["id"]
            api.request("POST", f"/api/v1/campaigns/{campaign}/publish", b"")
        finally:
            server.stop()
        rows, distinct = fill(database, campaign, devices, days)
        # The days' and weeks' sketches are made by Herald's own code: migrations 0017 and 0018 are undone and
        # applied again, and their data steps build each day's sketch and chunk count from the bitmaps just
        # written, then each week's from its days; 0024 then gives the tables their kind column again
        # (copying the bitmaps too, which the time includes).
        with sqlite3.connect(database) as connection:
            connection.execute("DROP TABLE device_week_sketches")
            connection.execute("DROP TABLE device_sketches")
            connection.execute(
                "DELETE FROM grdb_migrations WHERE identifier IN ('0017_device_sketches', '0018_device_week_sketches', '0024_device_kinds')")
        started = time.perf_counter()
        cli("migrate", database=database)
        sketched = time.perf_counter() - started
        server = Server(database, workdir / f"server-{devices}.log")
        try:
            api = Client(server.base, key=key)
            console = sign_in(server.base, "bench@example.com", "bench password 1")
            figures = []
            for client, path in ((api, f"/api/v1/campaigns/{campaign}/stats?from={days[0]}&to={days[-1]}"),
                                 (console, f"/campaigns/{campaign}/report?from={days[0]}&to={days[-1]}")):
                offset = server.log_offset()
                for _ in range(options.repeat):
                    status, _, reply = client.request("GET", path)
                    if status != 200:
                        raise SystemExit(f"{path} answered {status}: {reply[:200]!r}")
                if client is api:
                    counted, estimated, error = check_devices(json.loads(reply)["totals"], rows, distinct)
                time.sleep(0.3)  # the request log is written by a thread of its own
                times = server.server_times(offset, path.split("?")[0])
                figures.append(f"{percentile(times, 0.5):.1f} / {percentile(times, 0.99):.1f}")
            print(f"| {devices:,} | {rows:,} | {distinct:,} | {counted:,} ({'estimated' if estimated else 'counted'}, {error:+.2%}) | "
                  f"{figures[0]} | {figures[1]} | {sketched:.1f} s |", flush=True)
        finally:
            server.stop()
            database.unlink()


if __name__ == "__main__":
    try:
        main()
    except BenchError as error:
        raise SystemExit(f"devices.py: {error}")
