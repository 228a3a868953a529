"""Push sending: one campaign to N installations (default 100,000) through the mock APNs, the release
build of `herald serve` as shipped (its default window of 64 in flight; no rate limit, since the
mock has none), in interleaved rounds with the reference: h2load (nghttp2) sending the same payload
with a valid provider token to the same mock over one HTTP/2 connection with 64 streams, the mock's
own ceiling on this machine.

For each round: notifications a second from publish to the last one recorded, Herald's CPU per
notification (utime + stime from /proc around the send), the mock's CPU per notification, and
Herald's resident memory (VmRSS sampled every 0.2 s, and VmHWM). Installations are written straight
into the `installations` table (registering 100,000 through the API is not what is measured).

    python3 bench/push.py [--installations 100000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "Tests"))
from common import BINARY, ROOT, BenchError, cli, cpu_seconds  # noqa: E402
from push_providers import TOPIC, api, mock_providers, outbox_states  # noqa: E402

MOCK = ROOT / ".build" / "release" / "herald-push-mock"
def rss_kib(pid: int, field: str = "VmRSS") -> int:
    match = re.search(rf"{field}:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    return int(match.group(1)) if match else 0


def apns_jwt(key_file: Path, key_id: str, team_id: str) -> str:
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    signing_input = b64(json.dumps({"alg": "ES256", "kid": key_id}).encode()) + "." + b64(json.dumps({"iss": team_id, "iat": int(time.time())}).encode())
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return signing_input + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def seed_installations(database: Path, count: int) -> None:
    now = "2026-11-23 00:00:00.000"
    with sqlite3.connect(database) as connection:
        connection.executemany(
            """INSERT INTO installations (app_id, installation_id, platform, push_provider, push_token, app_version, language,
               country, time_zone, notifications_allowed, created_at, updated_at) VALUES (1, ?, 'ios', 'apns', ?, '2.4.0', ?, 'IR', 'Asia/Tehran', 1, ?, ?)""",
            ((f"device-{i}", f"{i:064x}", "fa" if i % 2 else "en", now, now) for i in range(count)))


def herald_round(database: Path, workdir: Path, mock, key: str, installations: int, number: int) -> dict:
    log = open(workdir / f"herald-{number}.log", "w")
    process = subprocess.Popen(
        [str(BINARY), "serve", "--db", str(database), "--port", "0", "--resources", str(ROOT), "--push-trust-roots", mock.certificate,
         "--push-rate", "0"], stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        base = re.search(r"(http://\S+?)/ ", process.stdout.readline()).group(1)
        status, created = api(base, "POST", "/api/v1/campaigns", key, {
            "app": 1, "name": f"Bench {number}", "channel": "push",
            "push": {"title": "Sale", "body": "Half price today, in every shop.", "translations": {"fa": {"title": "حراج", "body": "نیم‌بها، فقط امروز"}}},
            "data": [{"key": "screen", "value": "sale"}]})
        if status != 201:
            raise BenchError(f"creating the campaign: {status} {created}")
        campaign = created["id"]
        mock.reset()
        peak, samples, stop = [0], [], threading.Event()

        def sample():
            while not stop.is_set():
                value = rss_kib(process.pid)
                samples.append(value)
                peak[0] = max(peak[0], value)
                time.sleep(0.2)
        sampler = threading.Thread(target=sample, daemon=True)
        rss_before = rss_kib(process.pid)
        cpu_before, mock_before = cpu_seconds(process.pid), cpu_seconds(mock.process.pid)
        started = time.perf_counter()
        sampler.start()
        status, _ = api(base, "POST", f"/api/v1/campaigns/{campaign}/publish", key)
        if status != 200:
            raise BenchError(f"publishing: {status}")
        while True:
            states = outbox_states(database, campaign)
            if sum(states.values()) == installations and states.get("pending", 0) + states.get("sending", 0) == 0:
                break
            time.sleep(0.2)
        elapsed = time.perf_counter() - started
        stop.set()
        sampler.join()
        cpu = cpu_seconds(process.pid) - cpu_before
        mock_cpu = cpu_seconds(mock.process.pid) - mock_before
        sent = states.get("sent", 0)
        return {"sent": sent, "states": states, "seconds": elapsed, "per_second": sent / elapsed, "cpu_us": cpu / sent * 1e6,
                "mock_cpu_us": mock_cpu / sent * 1e6, "rss_before_mib": rss_before / 1024, "rss_peak_mib": peak[0] / 1024,
                "hwm_mib": rss_kib(process.pid, "VmHWM") / 1024}
    finally:
        process.terminate()
        process.wait(timeout=30)


def h2load_round(mock, workdir: Path, requests: int) -> dict:
    body = workdir / "payload.json"
    body.write_text(json.dumps({"aps": {"alert": {"title": "Sale", "body": "Half price today, in every shop."}}, "herald_campaign_id": 1, "screen": "sale"}))
    token = apns_jwt(mock.folder / "apns.p8", mock.ready["apnsKeyID"], mock.ready["apnsTeamID"])
    mock.reset()
    mock_before = cpu_seconds(mock.process.pid)
    started = time.perf_counter()
    result = subprocess.run(
        ["h2load", "-n", str(requests), "-c", "1", "-m", "64", "-d", str(body), "-H", f"authorization: bearer {token}",
         "-H", f"apns-topic: {TOPIC}", "-H", "apns-push-type: alert", "-H", "apns-priority: 10",
         mock.base_url + "/3/device/" + "ab" * 32], capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    succeeded = re.search(r"(\d+) succeeded", result.stdout)
    ok = int(succeeded.group(1)) if succeeded else 0
    if ok != requests:
        raise BenchError(f"h2load: {ok} of {requests} succeeded:\n{result.stdout[-1500:]}")
    return {"sent": ok, "seconds": elapsed, "per_second": ok / elapsed,
            "mock_cpu_us": (cpu_seconds(mock.process.pid) - mock_before) / ok * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--installations", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    for product in ("herald", "herald-push-mock"):
        subprocess.run(["swift", "build", "-c", "release", "--product", product], cwd=ROOT, check=True)
    if not shutil.which("h2load"):
        raise BenchError("h2load is missing: apt-get install nghttp2-client")
    workdir = Path(tempfile.mkdtemp(prefix="herald-push-bench-"))
    database = workdir / "herald.sqlite"
    os.environ["HERALD_PUSH_MOCK_BIN"] = str(MOCK)
    cli("app", "create", "--name", "Shop", "--platform", "ios", database=database)
    key = cli("key", "create", "--app", "1", "--scope", "campaigns:write", "--scope", "campaigns:read", database=database).split()[-1]
    seed_installations(database, options.installations)
    import push_providers
    push_providers.MOCK_BINARY = MOCK
    with mock_providers(workdir / "mock") as mock:
        cli("app", "push", "--app", "1", "--apns-key", str(mock.folder / "apns.p8"), "--apns-key-id", mock.ready["apnsKeyID"],
            "--apns-team-id", mock.ready["apnsTeamID"], "--apns-topic", TOPIC, "--apns-url", mock.base_url, database=database)
        for number in range(1, options.rounds + 1):
            herald = herald_round(database, workdir, mock, key, options.installations, number)
            reference = h2load_round(mock, workdir, options.installations)
            print(f"round {number}: Herald {herald['per_second']:,.0f}/s ({herald['seconds']:.1f} s, {herald['sent']:,} sent, states {herald['states']}), "
                  f"{herald['cpu_us']:.1f} µs CPU/notification (mock {herald['mock_cpu_us']:.1f}), "
                  f"RSS {herald['rss_before_mib']:.0f} → peak {herald['rss_peak_mib']:.0f} MiB (HWM {herald['hwm_mib']:.0f}); "
                  f"h2load {reference['per_second']:,.0f}/s (mock {reference['mock_cpu_us']:.1f} µs CPU/request); "
                  f"ratio {herald['per_second'] / reference['per_second']:.2f}", flush=True)


if __name__ == "__main__":
    try:
        main()
    except BenchError as error:
        sys.exit(f"bench/push.py: {error}")
