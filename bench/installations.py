#!/usr/bin/env python3
"""Installations registered through the public key: registrations/s held by N concurrent clients and
Herald's CPU per registration, beside the C reference; and the database's growth per installation with
the longest token a provider issues (FCM: 1,024 characters) or a real one.

    python3 bench/installations.py [--binary .build/release/herald] [--seconds 10] [--count 5000] [--clients 8] [--rounds 3] [--token-length 1024]

In interleaved rounds (the order alternating), each on a fresh SQLite file: Herald as shipped on loopback
takes registrations for --seconds from wrk (bench/registrations.lua) on --clients connections, each
sending the next once the last is answered, every one a new iOS device with an FCM token of
--token-length characters, a language, a country, an app version and a time zone; and the C reference
(bench/reference/sqlite_register.c: the same statements with Herald's pragmas, --clients registrations
a commit, the most Herald's group commit can share one sync among when each client waits for its
answer) writes --count such registrations into a database made by `herald migrate`. Each side:
registrations/s and CPU per registration (Herald's from /proc; the reference's own), the file's growth
(pages in use, after a checkpoint) per installation, and that every answered registration is stored."""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import sqlite3
import statistics
import string
import subprocess
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from common import ROOT, compile_reference, cpu_seconds

TOKEN_ALPHABET = string.ascii_letters + string.digits + "_:-"
DEVICE = {"platform": "ios", "appVersion": "12.4.1", "language": "de-DE", "country": "DE", "timeZone": "Europe/Berlin"}


def herald(binary: str, db: Path, *arguments: str) -> str:
    return subprocess.run([binary, *arguments, "--db", str(db)], check=True, capture_output=True, text=True).stdout.split()[-1]


def used_bytes(path: Path) -> int:
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
    return pages * page_size


def stored(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT count(*) FROM installations").fetchone()[0]


def registrations(count: int, token_length: int) -> list[tuple[str, str]]:
    """Installation ids and FCM tokens, the same for both sides of a round."""
    return [(f"bench-{number:08d}-{random.getrandbits(64):016x}", "".join(random.choices(TOKEN_ALPHABET, k=token_length)))
            for number in range(count)]


def herald_round(binary: str, folder: Path, index: int, seconds: int, clients: int, token_length: int) -> dict:
    db = folder / f"herald-{index}.sqlite"
    app = herald(binary, db, "app", "create", "--name", "Bench", "--platform", "ios", "--platform", "android")
    key = herald(binary, db, "key", "create", "--app", app, "--name", "bench", "--scope", "feed:read", "--scope", "events:write")
    # One address and one key here: the registration limits are lifted to measure the writes, not the limits.
    server = subprocess.Popen([binary, "serve", "--db", str(db), "--port", "0",
                               "--registrations-per-key", "1000000", "--registrations-per-address", "1000000"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(re.search(r"http://[^:]+:(\d+)/", server.stdout.readline()).group(1))
        before = used_bytes(db)
        cpu_before, started = cpu_seconds(server.pid), time.monotonic()
        # wrk, not Python threads: a Python client held the rate at what its own CPU allowed.
        result = subprocess.run(
            ["wrk", "-t2", f"-c{clients}", f"-d{seconds}s", "-s", str(ROOT / "bench" / "registrations.lua"), f"http://127.0.0.1:{port}/"],
            env={**os.environ, "KEY": key, "RUN": f"r{index}", "TOKEN_LENGTH": str(token_length)}, capture_output=True, text=True, check=True)
        elapsed, cpu = time.monotonic() - started, cpu_seconds(server.pid) - cpu_before
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    if "Non-2xx" in result.stdout or "Socket errors" in result.stdout:
        raise SystemExit(f"wrk saw failures:\n{result.stdout}")
    count = stored(db)
    return {"side": "herald", "registrations": count, "perSecond": count / elapsed, "cpuMicroseconds": cpu / count * 1e6,
            "bytesPerInstallation": (used_bytes(db) - before) / count}


def reference_round(binary: str, tool: Path, folder: Path, index: int, devices: list[tuple[str, str]], clients: int) -> dict:
    db = folder / f"reference-{index}.sqlite"
    app = herald(binary, db, "app", "create", "--name", "Bench", "--platform", "ios", "--platform", "android")
    rows = folder / f"reference-{index}.tsv"
    received = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.000")
    with rows.open("w") as out:
        for installation, token in devices:
            fields = [installation, DEVICE["platform"], "fcm", token, DEVICE["appVersion"], DEVICE["language"], DEVICE["country"],
                      DEVICE["timeZone"], received]
            out.write("\t".join(fields) + "\n")
    before = used_bytes(db)
    output = subprocess.run([str(tool), str(db), str(rows), app, str(clients)], check=True, capture_output=True, text=True).stdout
    figures = dict(pair.split("=") for pair in output.split())
    if stored(db) != len(devices):
        raise SystemExit(f"the reference stored {stored(db)} of {len(devices)}")
    return {"side": "reference", "registrations": len(devices), "perSecond": len(devices) / float(figures["seconds"]),
            "cpuMicroseconds": float(figures["cpu_seconds"]) / len(devices) * 1e6,
            "bytesPerInstallation": (used_bytes(db) - before) / len(devices)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=str(ROOT / ".build" / "release" / "herald"))
    parser.add_argument("--seconds", type=int, default=10, help="how long wrk registers installations with Herald each round")
    parser.add_argument("--count", type=int, default=5000, help="registrations the reference writes each round")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of Herald and the C reference")
    parser.add_argument("--token-length", type=int, default=1024, help="FCM token length: 1,024 the most taken, about 160 a real one")
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="herald-installations-"))
    tool = compile_reference("sqlite_register", folder, "-lsqlite3")
    results = []
    for index in range(options.rounds):
        devices = registrations(options.count, options.token_length)
        sides = [lambda: herald_round(options.binary, folder, index, options.seconds, options.clients, options.token_length),
                 lambda: reference_round(options.binary, tool, folder, index, devices, options.clients)]
        for side in sides if index % 2 == 0 else reversed(sides):
            result = side()
            results.append(result)
            print(json.dumps({"round": index + 1, **{key: round(value, 1) if isinstance(value, float) else value for key, value in result.items()}}),
                  flush=True)

    def median(side: str, key: str) -> float:
        return statistics.median(result[key] for result in results if result["side"] == side)

    print(json.dumps({
        "seconds": options.seconds, "referenceCount": options.count, "clients": options.clients, "tokenLength": options.token_length, "rounds": options.rounds,
        "heraldPerSecond": round(median("herald", "perSecond")), "referencePerSecond": round(median("reference", "perSecond")),
        "ratio": round(median("herald", "perSecond") / median("reference", "perSecond"), 2),
        "heraldCpuMicroseconds": round(median("herald", "cpuMicroseconds")),
        "referenceCpuMicroseconds": round(median("reference", "cpuMicroseconds")),
        "heraldBytesPerInstallation": round(median("herald", "bytesPerInstallation")),
        "referenceBytesPerInstallation": round(median("reference", "bytesPerInstallation")),
    }))


if __name__ == "__main__":
    main()
