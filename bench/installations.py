#!/usr/bin/env python3
"""Installations registered through the public key: registrations/s held by N concurrent clients, and the
database's growth per installation with the longest token a provider issues (FCM: 1,024 characters).

    python3 bench/installations.py [--binary .build/release/herald] [--count 5000] [--clients 8] [--token-length 1024]

Starts the binary on a fresh SQLite file on loopback, registers --count installations (each an iOS device
with an FCM token of --token-length characters, a language, a country, an app version), then reports the rate and
the file's growth (pages in use, after a checkpoint) per installation."""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import os
import random
import re
import signal
import sqlite3
import string
import subprocess
import tempfile
import time

TOKEN_ALPHABET = string.ascii_letters + string.digits + "_:-"


def herald(binary: str, db: str, *arguments: str) -> str:
    return subprocess.run([binary, *arguments, "--db", db], check=True, capture_output=True, text=True).stdout.split()[-1]


def used_bytes(path: str) -> int:
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
    return pages * page_size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/release/herald")
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--token-length", type=int, default=1024, help="FCM token length: 1,024 the most taken, about 160 a real one")
    options = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="herald-installations-")
    db = os.path.join(folder, "herald.sqlite")
    app = herald(options.binary, db, "app", "create", "--name", "Bench", "--platform", "ios", "--platform", "android")
    key = herald(options.binary, db, "key", "create", "--app", app, "--name", "bench", "--scope", "feed:read", "--scope", "events:write")
    # One address and one key here: the registration limits are lifted to measure the writes, not the limits.
    server = subprocess.Popen([options.binary, "serve", "--db", db, "--port", "0",
                               "--registrations-per-key", "1000000", "--registrations-per-address", "1000000"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(re.search(r"http://[^:]+:(\d+)/", server.stdout.readline()).group(1))
        before = used_bytes(db)
        ids = [f"bench-{number:08d}-{random.getrandbits(64):016x}" for number in range(options.count)]

        def register(chunk: list[str]) -> int:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            refused = 0
            for installation in chunk:
                body = json.dumps({"platform": "ios", "appVersion": "12.4.1", "language": "de-DE", "country": "DE",
                                   "timeZone": "Europe/Berlin", "notificationsAllowed": True, "pushProvider": "fcm",
                                   "pushToken": "".join(random.choices(TOKEN_ALPHABET, k=options.token_length))})
                connection.request("PUT", f"/api/v1/installations/{installation}", body,
                                   {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
                answer = connection.getresponse()
                answer.read()
                refused += answer.status not in (200, 201)
            return refused

        chunks = [ids[index::options.clients] for index in range(options.clients)]
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(options.clients) as pool:
            refused = sum(pool.map(register, chunks))
        elapsed = time.monotonic() - started
        grown = used_bytes(db) - before
        print(json.dumps({"installations": options.count, "clients": options.clients, "tokenLength": options.token_length, "refused": refused,
                          "registrationsPerSecond": round(options.count / elapsed), "bytesPerInstallation": round(grown / options.count)}))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
