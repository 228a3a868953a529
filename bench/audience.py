#!/usr/bin/env python3
"""Audience estimates at a million installations: `POST /api/v1/audience` on Herald as shipped (SQLite).

    python3 bench/audience.py [--installations 1000000] [--repeat 50]

The app's installations are written straight into a database `herald` migrated (the registration path
has its own benchmark, bench/installations.py): platforms, app versions, languages and countries drawn
from skewed distributions, so a few combinations hold most devices and a long tail holds the rest, and
70 % hold an FCM token. Then, for each targeting below: the first estimate (it reads the app's
installations grouped, `InstallationStore.profiles`) and --repeat more within the minute the groups are
kept, as a composer asks at every change; milliseconds from Herald's request log, p50 and p99. Beside
them, as `sqlite3` runs them: grouping the installations themselves (what the counts migration 0025 keeps
save), and reading those counts (the floor of a first estimate)."""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import string
import tempfile
import time
from pathlib import Path

from common import Client, Server, cli, ensure_binary, percentile

PLATFORMS = ["ios", "android", "web"]
VERSIONS = [f"{major}.{minor}.{patch}" for major in range(1, 6) for minor in range(0, 10) for patch in range(0, 4)]
LANGUAGES = ["en", "de", "fa", "ar", "ja", "fr", "es", "pt-BR", "pt", "it", "nl", "tr", "ru", "zh-Hans", "ko", "pl", "sv", "id", "hi", "th"]
COUNTRIES = ["US", "DE", "IR", "SA", "JP", "FR", "ES", "BR", "PT", "IT", "NL", "TR", "RU", "CN", "KR", "PL", "SE", "ID", "IN", "TH",
             "GB", "CA", "AU", "AT", "CH", "BE", "MX", "AR", "EG", "AE"]
TARGETINGS = {
    "everyone": {},
    "ios, German": {"platforms": ["ios"], "languages": ["de"]},
    "version 4.x by pattern, 30 %": {"appVersion": {"op": "regex", "value": "^4\\."}, "percentage": 30},
    "three countries, not 1.x": {"countries": ["DE", "AT", "CH"], "appVersion": {"op": "not_contains", "value": "1."}},
}
GROUPED_READ = """
    SELECT platform, app_version, language, country, COUNT(*), SUM(push_token IS NOT NULL) FROM installations
    WHERE app_id = ? GROUP BY platform, app_version, language, country ORDER BY 5 DESC, 1, 2, 3, 4 LIMIT 5000"""

COUNTS_READ = """
    SELECT platform, app_version, language, country, installations, with_token FROM installation_profiles
    WHERE app_id = ? ORDER BY installations DESC, platform, app_version, language, country LIMIT 5000"""


def skewed(choices: list[str], rng: random.Random) -> str:
    """A Zipf-like draw: the first choices far more often than the last."""
    return choices[min(int(rng.paretovariate(1.2)) - 1, len(choices) - 1)]


def fill(database: Path, app: int, count: int) -> None:
    rng = random.Random(7)
    now = "2026-11-29T12:00:00.000Z"
    with sqlite3.connect(database) as db:
        db.execute("PRAGMA journal_mode=WAL")
        rows = []
        for number in range(count):
            token = "".join(rng.choices(string.ascii_letters, k=150)) if rng.random() < 0.7 else None
            rows.append((app, f"bench-{number:08d}", skewed(PLATFORMS, rng), "fcm" if token else None, token,
                         skewed(VERSIONS[::-1], rng), skewed(LANGUAGES, rng), skewed(COUNTRIES, rng), "UTC", 1, now, now, now))
            if len(rows) == 50_000:
                db.executemany(INSERT, rows)
                rows.clear()
        db.executemany(INSERT, rows)


INSERT = """INSERT INTO installations (app_id, installation_id, platform, push_provider, push_token, app_version, language, country,
    time_zone, notifications_allowed, created_at, updated_at, registered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--installations", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    ensure_binary()
    with tempfile.TemporaryDirectory() as folder:
        database = Path(folder) / "herald.sqlite"
        app = int(cli("app", "create", "--name", "Bench", "--platform", "ios", "--platform", "android", "--platform", "web",
                      database=database).split()[-1])
        key = cli("key", "create", "--app", str(app), "--scope", "campaigns:read", database=database).split()[-1]
        started = time.perf_counter()
        fill(database, app, args.installations)
        print(f"{args.installations:,} installations written in {time.perf_counter() - started:.1f} s")
        with sqlite3.connect(database) as db:
            groups = db.execute("SELECT COUNT(*) FROM installation_profiles WHERE app_id = ?", (app,)).fetchone()[0]
            timings = {}
            for name, sql in (("grouping the installations", GROUPED_READ), ("reading the kept counts", COUNTS_READ)):
                rounds = []
                for _ in range(3):
                    started = time.perf_counter()
                    db.execute(sql, (app,)).fetchall()
                    rounds.append((time.perf_counter() - started) * 1000)
                timings[name] = min(rounds)
        print(f"{groups:,} groups; in sqlite3, best of 3: " + ", ".join(f"{name} {ms:.1f} ms" for name, ms in timings.items()))
        server = Server(database, Path(folder) / "herald.log")
        try:
            server.wait_ready()
            client = Client(server.base, key=key)
            print("| targeting | installations | with token | estimated | first ms | then p50 ms | then p99 ms |")
            print("|---|---|---|---|---|---|---|")
            for name, targeting in TARGETINGS.items():
                # A new app's groups for each targeting's first estimate: the cache is a minute per app.
                body = json.dumps({"app": app, "targeting": targeting}).encode()
                offset = server.log_offset()
                _, _, reply = client.request("POST", "/api/v1/audience", body)
                for _ in range(args.repeat):
                    client.request("POST", "/api/v1/audience", body)
                times = server.server_times(offset, "/api/v1/audience")
                answer = json.loads(reply)
                print(f"| {name} | {answer['installations']:,} | {answer['withPushToken']:,} | {answer['estimated']} | "
                      f"{times[0]:.1f} | {percentile(times[1:], 0.5):.2f} | {percentile(times[1:], 0.99):.2f} |")
                # Past the minute the groups are kept, so the next targeting's first estimate reads them again.
                server.stop()
                server = Server(database, Path(folder) / "herald.log")
                server.wait_ready()
                client = Client(server.base, key=key)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
