#!/usr/bin/env python3
"""Console benchmark: server time of the console's pages with many campaigns (default 10,000).

Creates two apps and N campaigns of every layout with `herald import`, then publishes, pauses, stops,
archives and schedules a share of them through the management API (40 % running, 10 % paused, 10 %
scheduled, 5 % ended, 5 % archived, 30 % drafts), signs in through the login form, and requests each
page --repeat times on one connection after one untimed warm-up. Server time per request is read from
Herald's own request log (`msg=request method=GET ms=3.20 path=/campaigns … status=200`), so the client is not counted; the client's wall
time is printed beside it for reference. Target: p99 < 50 ms.
Run from the repository root:  python3 bench/console.py [--campaigns 10000] [--repeat 50]
It builds the release binary if needed and uses a temporary database."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BenchError, Client, Server, campaign, cli, ensure_binary, percentile, sign_in, verdict  # noqa: E402

TARGET_MS = 50.0
EMAIL, PASSWORD = "bench@example.com", "bench password 1"


def lifecycle(index: int) -> list[str]:
    """The API actions that give campaign `index` its place in the mix (by index modulo 20)."""
    slot = index % 20
    if slot < 8:
        return ["publish"]                 # running
    if slot < 10:
        return ["publish", "pause"]        # paused
    if slot == 10:
        return ["publish", "stop"]         # ended
    if slot == 11:
        return ["archive"]                 # archived
    if slot < 14:
        return ["publish"]                 # scheduled: its start is in the future
    return []                              # draft


def seed(options, database: Path, workdir: Path) -> tuple[dict[int, str], list[tuple[int, int]]]:
    """Creates the user, two apps with keys, and imports the campaigns as drafts.
    Returns the key of each app and (campaign id, index) pairs."""
    cli("user", "create", "--email", EMAIL, "--role", "admin", "--password-stdin", database=database, stdin=PASSWORD + "\n")
    apps = [int(cli("app", "create", "--name", name, "--platform", "ios", "--platform", "android", database=database).split()[-1])
            for name in ("Shop", "Shop Lite")]
    keys = {app: cli("key", "create", "--app", str(app), "--scope", "campaigns:read", "--scope", "campaigns:write",
                     database=database).split()[-1] for app in apps}
    future = (datetime.now(timezone.utc) + timedelta(days=30)).strftime("%Y-%m-%dT08:00:00Z")
    created: list[tuple[int, int]] = []
    for position, app in enumerate(apps):
        # Two thirds in the first app, one third in the second.
        indices = [index for index in range(options.campaigns) if (index % 3 == 0) == (position == 1)]
        documents = []
        for index in indices:
            document = campaign(index, app)
            if index % 20 in (12, 13):
                document["schedule"]["start"] = future
            documents.append(document)
        path = workdir / f"campaigns-{app}.json"
        path.write_text(json.dumps({"schemaVersion": 1, "campaigns": documents}))
        output = cli("import", str(path), "--app", str(app), database=database)
        ids = [int(text) for text in output.split(":", 1)[1].split(",")]
        if len(ids) != len(indices):
            raise BenchError(f"import created {len(ids)} campaigns, expected {len(indices)}")
        created += list(zip(ids, indices))
    return keys, created


def apply_lifecycle(base: str, keys: dict[int, str], apps_of: dict[int, int], created: list[tuple[int, int]]) -> int:
    """Runs the state changes through the management API on two threads, each with persistent
    connections; one campaign's actions stay on one thread, in order. Returns how many were made."""
    shares: list[list[tuple[int, str]]] = [[], []]
    for campaign_id, index in created:
        shares[campaign_id % 2] += [(campaign_id, action) for action in lifecycle(index)]
    failures: list[BaseException] = []

    def run(share: list[tuple[int, str]]) -> None:
        clients = {app: Client(base, key=key) for app, key in keys.items()}
        try:
            for campaign_id, action in share:
                if failures:
                    return
                clients[apps_of[campaign_id]].request("POST", f"/api/v1/campaigns/{campaign_id}/{action}", b"")
        except BaseException as error:  # noqa: BLE001 - raised again below
            failures.append(error)
        finally:
            for client in clients.values():
                client.close()

    threads = [threading.Thread(target=run, args=(share,)) for share in shares]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return sum(map(len, shares))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--campaigns", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=50, help="timed requests per page")
    options = parser.parse_args()
    if options.campaigns < 40 or options.repeat < 1:
        parser.error("--campaigns must be at least 40 and --repeat at least 1")

    ensure_binary()
    workdir = Path(tempfile.mkdtemp(prefix="herald-console-bench-"))
    server = None
    try:
        database = workdir / "herald.sqlite"
        started = time.perf_counter()
        keys, created = seed(options, database, workdir)
        imported = time.perf_counter() - started
        apps_of = {}
        apps = sorted(keys)
        for campaign_id, index in created:
            apps_of[campaign_id] = apps[1] if index % 3 == 0 else apps[0]

        server = Server(database, workdir / "server.log")
        server.wait_ready()
        started = time.perf_counter()
        actions = apply_lifecycle(server.base, keys, apps_of, created)
        changed = time.perf_counter() - started

        # The campaign whose pages are timed: a paused one with a few edits in its history.
        target = next(campaign_id for campaign_id, index in created if index % 20 == 9 and index > options.campaigns // 2)
        api = Client(server.base, key=keys[apps_of[target]])
        for edit in range(3):
            _, headers, reply = api.request("GET", f"/api/v1/campaigns/{target}")
            document = json.loads(reply)
            document["name"] = f"{document['name']} (edit {edit + 1})"
            document["priority"] = 1 + (document["priority"] % 10)
            api.headers["If-Match"] = headers["ETag"]
            api.request("PUT", f"/api/v1/campaigns/{target}", json.dumps(document).encode())
            del api.headers["If-Match"]
        api.close()

        console = sign_in(server.base, EMAIL, PASSWORD)
        mix = []
        for status in ("running", "paused", "scheduled", "ended", "archived", "draft"):
            _, _, page = console.request("GET", f"/campaigns?status={status}")
            found = re.search(rb"([0-9,]+) campaigns?\b", page)
            mix.append(f"{found.group(1).decode() if found else '?'} {status}")
        last_page = math.ceil(options.campaigns / 25)
        pages = [
            ("list, first page (last edited)", "/campaigns"),
            (f"list, last page ({last_page})", f"/campaigns?page={last_page}"),
            ("list, search \"winter\"", "/campaigns?q=winter"),
            ("list, running in one app", f"/campaigns?status=running&app={apps[0]}"),
            ("list, sorted by name", "/campaigns?sort=name"),
            ("composer /campaigns/new", "/campaigns/new"),
            ("edit /campaigns/{id}/edit", f"/campaigns/{target}/edit"),
            ("detail /campaigns/{id}", f"/campaigns/{target}"),
            ("history /campaigns/{id}/history", f"/campaigns/{target}/history"),
            ("preview /campaigns/{id}/preview", f"/campaigns/{target}/preview"),
        ]

        print(f"machine: {os.cpu_count()} cores; {options.campaigns:,} campaigns in 2 apps: {', '.join(mix)}")
        print(f"seeding: herald import {imported:.1f} s, {actions:,} state changes through the API {changed:.1f} s")
        print(f"{options.repeat} requests per page after one warm-up, on one connection, signed in as an admin; "
              f"server time from Herald's request log; target p99 < {TARGET_MS:.0f} ms\n")
        header = f"{'page':<36} {'server p50':>11} {'server p99':>11}  {'target':<8} {'wall p50':>9} {'wall p99':>9}  bytes"
        print(header)
        print("-" * len(header))
        missed = 0
        for label, path in pages:
            console.request("GET", path)  # warm-up
            offset = server.log_offset()
            walls = []
            size = 0
            for _ in range(options.repeat):
                begun = time.perf_counter()
                _, _, body = console.request("GET", path)
                walls.append((time.perf_counter() - begun) * 1000)
                size = len(body)
            bare = urllib.parse.urlsplit(path).path
            deadline = time.monotonic() + 5
            while len(times := server.server_times(offset, bare)) < options.repeat and time.monotonic() < deadline:
                time.sleep(0.05)
            if len(times) != options.repeat:
                raise BenchError(f"{path}: found {len(times)} log lines for {options.repeat} requests")
            p50, p99 = percentile(times, 0.5), percentile(times, 0.99)
            met = p99 < TARGET_MS
            missed += not met
            print(f"{label:<36} {p50:>8.1f} ms {p99:>8.1f} ms  {verdict(met):<8} {percentile(walls, 0.5):>6.1f} ms "
                  f"{percentile(walls, 0.99):>6.1f} ms  {size:,}")
        console.close()
        print(f"\n{len(pages) - missed} of {len(pages)} pages met p99 < {TARGET_MS:.0f} ms")
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
