#!/usr/bin/env python3
"""Ingestion and report benchmark: loads N events (default 10 million) through POST /api/v1/events in
1000-event batches from 4 concurrent clients, then times the stats endpoint and the report pages.

Server time is read from Herald's own request log (`GET /path 200 3.2ms`), so client overhead is
not counted. Run from the repository root:  python3 bench/events.py [--events 10000000]
It builds the release binary if needed and uses a temporary database."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINARY = ROOT / ".build" / "release" / "herald"
LOG_LINE = re.compile(r"(GET|POST|PUT|DELETE) (\S+) (\d{3}) ([0-9.]+)ms")


def cli(*arguments: str, database: Path, stdin: str | None = None) -> str:
    result = subprocess.run([str(BINARY), *arguments, "--db", str(database), "--resources", str(ROOT)],
                            input=stdin, capture_output=True, text=True, check=True)
    return result.stdout


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


class Client:
    def __init__(self, base: str, key: str | None = None, cookie: str | None = None):
        url = urllib.parse.urlsplit(base)
        self.connection = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
        self.headers = {}
        if key:
            self.headers["Authorization"] = f"Bearer {key}"
        if cookie:
            self.headers["Cookie"] = cookie

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str = "application/json"):
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = content_type
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--campaigns", type=int, default=20)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--repeat", type=int, default=30, help="requests per timed page")
    options = parser.parse_args()

    if not BINARY.exists():
        subprocess.run(["swift", "build", "-c", "release", "--product", "herald"], cwd=ROOT, check=True)
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

        # Ingestion: 1000-event batches from concurrent clients.
        now = datetime.now(timezone.utc)
        batches = options.events // 1000
        next_batch = iter(range(batches))
        lock = threading.Lock()
        latencies: list[float] = []
        accepted = [0]

        def worker(seed: int) -> None:
            client = Client(base, key=key)
            types = [("impression", {})] * 6 + [("click", {"action": "primary"}), ("dismiss", {"dismissType": "auto"}),
                                                 ("error", {"errorCode": "image_fetch"}), ("conversion", {"event": "purchase"})]
            counter = seed
            while True:
                with lock:
                    batch = next(next_batch, None)
                if batch is None:
                    return
                events = []
                for _ in range(1000):
                    counter += 7919
                    kind, extra = types[counter % len(types)]
                    event = {"id": str(uuid.uuid4()), "type": kind, "campaignId": campaigns[counter % len(campaigns)],
                             "occurredAt": (now - timedelta(seconds=counter % (options.days * 86_400))).strftime("%Y-%m-%dT%H:%M:%SZ"),
                             "platform": "ios" if counter % 3 else "android", "installationId": f"iid-{counter % 50_000}"}
                    event.update(extra)
                    events.append(event)
                body = json.dumps({"events": events}).encode()
                started = time.perf_counter()
                status, _, reply = client.request("POST", "/api/v1/events", body)
                elapsed = time.perf_counter() - started
                assert status == 200, reply
                with lock:
                    latencies.append(elapsed * 1000)
                    accepted[0] += json.loads(reply)["accepted"]

        started = time.perf_counter()
        threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(options.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        duration = time.perf_counter() - started

        print(f"machine: {os.cpu_count()} cores; database {database} ({database.stat().st_size / 1e6:.0f} MB after load)")
        print(f"ingestion: {accepted[0]:,} events in {duration:.1f} s = {accepted[0] / duration:,.0f} events/s "
              f"({options.clients} clients, 1000-event batches; batch p50 {percentile(latencies, 0.5):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms, client-side)")

        # Reads: stats endpoint and report pages, server time from the request log.
        login = Client(base)
        status, headers, page = login.request("GET", "/login")
        cookie = headers.get("Set-Cookie", "").split(";")[0]
        token = re.search(rb'name="csrf_token" value="([^"]+)"', page).group(1).decode()
        console = Client(base, cookie=cookie)
        form = urllib.parse.urlencode({"csrf_token": token, "email": "bench@example.com", "password": "bench password 1"}).encode()
        status, headers, _ = console.request("POST", "/login", form, "application/x-www-form-urlencoded")
        console = Client(base, cookie=headers.get("Set-Cookie", "").split(";")[0])

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
            if status == 404:
                print(f"{label}: not available in this build (404)")
                continue
            time.sleep(0.2)
            times = [float(m.group(4)) for m in LOG_LINE.finditer(log_path.read_text()) if m.group(2) == path.split("?")[0]]
            recent = times[-options.repeat:]
            print(f"{label}: status {status}, server time p50 {percentile(recent, 0.5):.1f} ms, p99 {percentile(recent, 0.99):.1f} ms "
                  f"over {len(recent)} requests")
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


if __name__ == "__main__":
    main()
