"""A push campaign sent to 1,000 installations through the mock APNs, with `herald serve` killed by
SIGKILL while notifications are with the provider, then started again: every installation is sent
the campaign exactly once.

The kill comes while the mock holds its answers, so the notifications handed over are at the mock
and unanswered: they were marked `sending` in a committed claim before they left, so the restarted
server settles them as `unknown` and does not send them again; the rest it sends.
"""

from __future__ import annotations

import collections
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

from push_providers import (
    REPO_ROOT, UNLIMITED_REGISTRATIONS, api, give_app_the_mock, mock_providers, outbox_states, register_installations, wait_for,
)

INSTALLATIONS = 1000
BANNER = re.compile(r"Herald is running at (http://\S+?/?) \(database ")


def pump(stream, lines: "queue.Queue[str]") -> None:
    """Forwards stdout lines to a queue, and keeps draining so the pipe never fills."""
    for raw in iter(stream.readline, b""):
        lines.put(raw.decode("utf-8", errors="replace"))


def start_herald(binary: Path, workdir: Path, database: Path, mock, *extra: str):
    """`herald serve` as a process this test can SIGKILL; returns the process and its base URL."""
    process = subprocess.Popen(
        [str(binary), "serve", "--db", str(database), "--port", "0", "--resources", str(REPO_ROOT),
         "--push-trust-roots", mock.certificate, "--push-rate", "0", *UNLIMITED_REGISTRATIONS, *extra],
        stdout=subprocess.PIPE, stderr=open(workdir / f"herald-{time.monotonic_ns()}.log", "wb"), cwd=workdir)
    lines: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=pump, args=(process.stdout, lines), daemon=True).start()
    match = BANNER.search(lines.get(timeout=30))
    assert match, "herald serve did not start"
    return process, match.group(1).rstrip("/")


def test_a_sigkill_mid_send_then_a_restart_sends_each_installation_exactly_once(tmp_path, herald_cli, herald_binary):
    database = tmp_path / "herald.sqlite"
    herald_cli("app", "create", "--name", "Shop", "--platform", "ios", database=database, cwd=tmp_path)
    key = herald_cli("key", "create", "--app", "1", "--scope", "events:write", "--scope", "campaigns:write", "--scope", "campaigns:read",
                     database=database, cwd=tmp_path).split()[-1]
    with mock_providers(tmp_path / "mock") as mock:
        give_app_the_mock(herald_cli, database, tmp_path, "1", mock)
        process, base_url = start_herald(herald_binary, tmp_path, database, mock)
        try:
            tokens = register_installations(base_url, key, INSTALLATIONS)
            status, created = api(base_url, "POST", "/api/v1/campaigns", key, {
                "app": 1, "name": "Crash test", "channel": "push",
                "push": {"title": "حراج", "body": "نیم‌بها، فقط امروز"}})
            assert status == 201, created
            campaign = created["id"]
            # Let part of it go, then hold the mock's answers and wait until what Herald handed over has arrived.
            status, _ = api(base_url, "POST", f"/api/v1/campaigns/{campaign}/publish", key)
            assert status == 200
            wait_for(lambda: len(mock.device_requests()) >= 300, 60, "300 notifications at the mock")
            mock.hold()
            arrived = wait_for(_settled(mock), 30, "the notifications in flight to arrive")
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        assert arrived < INSTALLATIONS, "the kill should come mid-send"
        states_at_kill = outbox_states(database, campaign)
        assert states_at_kill.get("sending", 0) > 0, f"some notifications were with the provider at the kill: {states_at_kill}"
        mock.release()

        process, base_url = start_herald(herald_binary, tmp_path, database, mock)
        try:
            states = wait_for(lambda: (s := outbox_states(database, campaign)) and s.get("pending", 0) + s.get("sending", 0) == 0
                              and sum(s.values()) == INSTALLATIONS and s, 120, "the send to finish after the restart")
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=15) == 0

        per_token = collections.Counter(r["path"].removeprefix("/3/device/") for r in mock.device_requests())
        assert set(per_token) == set(tokens), "every installation was sent the campaign"
        twice = {token: count for token, count in per_token.items() if count > 1}
        assert not twice, f"{len(twice)} installations got it more than once"
        # What was with the mock at the kill arrived there; the restarted server counts it unknown, not sent again.
        assert states.get("unknown", 0) == states_at_kill["sending"], states
        assert states.get("sent", 0) + states.get("unknown", 0) == INSTALLATIONS, states


def _settled(mock):
    """True once the mock has received nothing new for half a second (what was in flight has arrived)."""
    seen = {"count": -1, "since": time.monotonic()}

    def check():
        count = len(mock.device_requests())
        if count != seen["count"]:
            seen.update(count=count, since=time.monotonic())
            return None
        return count if time.monotonic() - seen["since"] > 0.5 else None
    return check
