#!/usr/bin/env python3
"""What the request log costs: the feed of 100 campaigns served by two release servers, one at `info`
(the default: one structured line per request, to a file as the journal would take it) and one at
`error`, in interleaved rounds with wrk -t2 -c64, on the 200 path and the 304 path (If-None-Match).
Prints requests/s, the server's CPU per request (utime + stime from /proc, steadier than throughput on a
shared machine), p50/p99, and the info/error ratios. Run from the repository root:
    python3 bench/logging_cost.py [--seconds 8] [--rounds 3]"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import urllib.request
from pathlib import Path

from common import Server, cli, cpu_seconds, ensure_binary, ensure_wrk, feed_campaign, wrk


def seeded_database(folder: Path, campaigns: int) -> tuple[Path, str]:
    """A database with `campaigns` published campaigns and a feed key, made through a short-lived server."""
    database = folder / "feed.sqlite"
    app = cli("app", "create", "--name", "Bench", "--platform", "ios", database=database).split()[-1]
    key = cli("key", "create", "--app", app, "--scope", "feed:read", "--scope", "campaigns:write", database=database).split()[-1]
    server = Server(database, folder / "seed.log", log_level="error")
    try:
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        for index in range(campaigns):
            request = urllib.request.Request(f"{server.base}/api/v1/campaigns", data=json.dumps(feed_campaign(index, int(app))).encode(),
                                             headers=headers, method="POST")
            campaign = json.load(urllib.request.urlopen(request))["id"]
            urllib.request.urlopen(urllib.request.Request(f"{server.base}/api/v1/campaigns/{campaign}/publish", data=b"",
                                                          headers=headers, method="POST"))
    finally:
        server.stop()
    return database, key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    ensure_binary()
    ensure_wrk()
    folder = Path(tempfile.mkdtemp(prefix="herald-log-bench-"))
    database, key = seeded_database(folder, 100)
    servers = {level: Server(database, folder / f"{level}.log", log_level=level) for level in ("info", "error")}
    try:
        auth = {"Authorization": f"Bearer {key}"}
        etag = urllib.request.urlopen(urllib.request.Request(f"{servers['info'].base}/api/v1/feed", headers=auth)).headers["ETag"]
        paths = {"200": auth, "304": {**auth, "If-None-Match": etag}}
        results: dict[tuple[str, str], list[dict]] = {(level, path): [] for level in servers for path in paths}
        print(f"machine: {os.cpu_count()} cores; wrk -t2 -c64 -d{options.seconds}s; {options.rounds} interleaved rounds; feed of 100 campaigns")
        for round_number in range(options.rounds):
            for path, headers in paths.items():
                # Alternate which level goes first, so neither always runs on a warmer machine.
                levels = ["info", "error"] if round_number % 2 == 0 else ["error", "info"]
                for level in levels:
                    server = servers[level]
                    before = cpu_seconds(server.pid)
                    figures = wrk(f"{server.base}/api/v1/feed", options.seconds, headers)
                    requests = figures["rps"] * options.seconds
                    figures["cpu_us"] = (cpu_seconds(server.pid) - before) / requests * 1e6 if requests else float("nan")
                    results[(level, path)].append(figures)
                    print(f"  round {round_number + 1} feed {path} {level:5}: {figures['rps']:8.0f} req/s  {figures['cpu_us']:5.1f} µs CPU/req  "
                          f"p50 {figures['p50']:.2f} ms  p99 {figures['p99']:.2f} ms  errors: {figures['errors']}")
        print("\n| path | level | req/s (median) | CPU µs/req (median) | p50 ms | p99 ms |\n|---|---|---|---|---|---|")
        for path in paths:
            for level in servers:
                runs = results[(level, path)]
                print(f"| feed {path} | {level} | {statistics.median(r['rps'] for r in runs):,.0f} | {statistics.median(r['cpu_us'] for r in runs):.1f} | "
                      f"{statistics.median(r['p50'] for r in runs):.2f} | {statistics.median(r['p99'] for r in runs):.2f} |")
            info, error = results[("info", path)], results[("error", path)]
            print(f"| feed {path} | info ÷ error | {statistics.median(r['rps'] for r in info) / statistics.median(r['rps'] for r in error):.2f}× | "
                  f"{statistics.median(r['cpu_us'] for r in info) / statistics.median(r['cpu_us'] for r in error):.2f}× | | |")
        lines = sum(1 for _ in open(folder / "info.log"))
        print(f"\ninfo log: {lines:,} lines, {(folder / 'info.log').stat().st_size / 1e6:.0f} MB")
    finally:
        for server in servers.values():
            server.stop()


if __name__ == "__main__":
    main()
