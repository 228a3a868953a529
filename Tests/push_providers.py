"""The mock APNs and FCM (`herald-push-mock`, built with the package) as a Python fixture, and the
steps every push test takes: give an app the mock's credentials, register installations, publish a
push campaign and read its outbox.

The mock speaks the providers' real protocols on loopback (HTTP/2 over TLS with a self-signed
certificate that `herald serve --push-trust-roots` is told to trust); its plain-HTTP control port
reports what it received and can hold its answers.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

REPO_ROOT = Path(__file__).resolve().parents[1]
MOCK_BINARY = Path(os.environ.get("HERALD_PUSH_MOCK_BIN", REPO_ROOT / ".build" / "debug" / "herald-push-mock"))
TOPIC = "com.example.shop"


@dataclass
class MockProviders:
    ready: dict
    folder: Path
    process: subprocess.Popen

    @property
    def base_url(self) -> str:
        return self.ready["baseURL"]

    @property
    def certificate(self) -> str:
        return self.ready["certificate"]

    def _control(self, method: str, path: str) -> bytes:
        request = urllib.request.Request(self.ready["controlURL"] + path, method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.read()

    def requests(self) -> list[dict]:
        return json.loads(self._control("GET", "/requests"))

    def device_requests(self) -> list[dict]:
        """Requests that carried a notification (APNs sends and FCM sends, not FCM's token exchange)."""
        return [r for r in self.requests() if r["path"].startswith("/3/device/") or r["path"].endswith("messages:send")]

    def stats(self) -> dict:
        return json.loads(self._control("GET", "/stats"))

    def hold(self) -> None:
        self._control("POST", "/hold")

    def release(self) -> None:
        self._control("POST", "/release")

    def reset(self) -> None:
        self._control("POST", "/reset")


@contextmanager
def mock_providers(folder: Path) -> Iterator[MockProviders]:
    """`herald-push-mock serve` with fresh credentials written into `folder`, until the block ends."""
    folder.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [str(MOCK_BINARY), "serve", "--keys-out", str(folder), "--cert-out", str(folder / "mock.pem"), "--port", "0", "--control-port", "0"],
        stdout=subprocess.PIPE, stderr=open(folder / "mock.stderr.log", "wb"),
    )
    line = process.stdout.readline()
    if not line:
        process.kill()
        raise RuntimeError(f"herald-push-mock printed nothing: {(folder / 'mock.stderr.log').read_text()}")
    try:
        yield MockProviders(json.loads(line), folder, process)
    finally:
        process.kill()
        process.wait()


def give_app_the_mock(herald_cli, database: Path, cwd: Path, app_id: str, mock: MockProviders) -> None:
    """`herald app push` with the mock's key and service account, and the mock's address for both."""
    herald_cli(
        "app", "push", "--app", app_id,
        "--apns-key", str(mock.folder / "apns.p8"), "--apns-key-id", mock.ready["apnsKeyID"], "--apns-team-id", mock.ready["apnsTeamID"],
        "--apns-topic", TOPIC, "--apns-url", mock.base_url,
        "--fcm-service-account", str(mock.folder / "fcm-service-account.json"), "--fcm-url", mock.base_url,
        database=database, cwd=cwd)


def api(base_url: str, method: str, path: str, key: str, document=None) -> tuple[int, dict | None]:
    body = None if document is None else json.dumps(document).encode()
    request = urllib.request.Request(base_url + path, method=method, data=body, headers={
        "Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            text = answer.read()
            return answer.status, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        text = error.read()
        return error.code, json.loads(text) if text else None


def apns_token(index: int) -> str:
    """A device token as APNs gives them (64 hex digits), distinct per index."""
    return f"{index:064x}"


# `herald serve` flags lifting the registration limits (60 a minute per address by default): every
# registration of these tests comes from loopback within seconds.
UNLIMITED_REGISTRATIONS = ("--registrations-per-address", "1000000", "--registrations-per-key", "1000000")


def register_installations(base_url: str, key: str, count: int, language: str = "fa", start: int = 0) -> list[str]:
    """Registers `count` iOS installations with APNs tokens through `PUT /api/v1/installations/{id}`."""
    tokens = []
    for index in range(start, start + count):
        token = apns_token(index)
        status, answer = api(base_url, "PUT", f"/api/v1/installations/device-{index}", key, {
            "platform": "ios", "pushProvider": "apns", "pushToken": token, "appVersion": "2.4.0",
            "language": language, "country": "IR", "timeZone": "Asia/Tehran", "notificationsAllowed": True})
        assert status in (200, 201), (status, answer)
        tokens.append(token)
    return tokens


def outbox_states(database: Path, campaign_id: int) -> dict[str, int]:
    """The campaign's outbox rows by state, read from the SQLite file (read-only, beside the server)."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30) as connection:
        rows = connection.execute("SELECT state, COUNT(*) FROM push_outbox WHERE campaign_id = ? GROUP BY state", (campaign_id,))
        return dict(rows.fetchall())


def wait_for(condition, timeout: float, what: str, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
