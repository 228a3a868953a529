"""Slow and greedy clients against the real `herald serve`: a slow client must cost a socket, for a
bounded time, and nothing else.

* 1,000 connections from other loopback addresses (127.0.0.2 to 127.0.0.250; all of 127/8 is loopback
  on Linux) trickle header lines or body bytes; meanwhile a normal client's /healthz and feed requests
  are answered within 100 ms, and every trickling connection is closed soon after its deadline.
* Rounds of 1,000 keep-alive connections (wrk -t2 -c1000) that leave at once: after each round the
  server answers at once and holds no leftover sockets. (libmicrohttpd 0.9.75's own epoll loop slept
  with the closes in hand until the 30 s idle timeout; see docs/architecture.md.)
* The limits' options are checked like the others.

The Swift tests in Tests/HeraldTests/MicroHTTPD/AdapterTests.swift cover each defence alone; this runs them
together, end to end, at full size. Deadlines are short here (2 s) so the whole file takes ~30 s.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 2  # seconds, for --head-timeout and --body-grace
TRICKLERS = 1000
SOURCES = [f"127.0.0.{host}" for host in range(2, 251)]
FAST = 0.1  # seconds a normal request may take while the tricklers hold their connections


@dataclass
class Herald:
    address: tuple[str, int]
    pid: int
    key: str


def serve(tmp_path_factory, herald_cli, herald_serve, name: str, *arguments: str):
    workdir = tmp_path_factory.mktemp(name)
    database = workdir / "herald.sqlite"
    app_id = herald_cli("app", "create", "--name", "Shop", "--platform", "ios", database=database, cwd=workdir).split()[-1]
    key = herald_cli("key", "create", "--app", app_id, "--name", "sdk", "--scope", "feed:read",
                     database=database, cwd=workdir).split()[-1]
    return herald_serve(workdir, database, *arguments), key


@pytest.fixture(scope="module")
def herald(tmp_path_factory, herald_cli, herald_serve):
    context, key = serve(tmp_path_factory, herald_cli, herald_serve, "herald-slow-clients",
                         "--head-timeout", str(DEADLINE), "--body-grace", str(DEADLINE), "--min-body-rate", "1000")
    with context as server:
        host, port = server.base_url.removeprefix("http://").rsplit(":", 1)
        yield Herald(address=(host, int(port)), pid=server.pid, key=key)


def timed_request(herald: Herald, target: str, headers: str = "") -> float:
    """Seconds for a fresh connection to get a 200 for `target`."""
    started = time.perf_counter()
    with socket.create_connection(herald.address, timeout=5) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{headers}\r\n".encode())
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    assert received.startswith(b"HTTP/1.1 200 "), received[:200]
    return time.perf_counter() - started


def open_sockets(pid: int) -> int:
    """The server's open sockets. The server closes descriptors while they are listed: one gone between
    the listing and its readlink was not open, and is not counted."""
    count = 0
    for entry in os.scandir(f"/proc/{pid}/fd"):
        try:
            count += os.readlink(entry.path).startswith("socket:")
        except FileNotFoundError:
            continue
    return count


@dataclass
class Trickler:
    sock: socket.socket
    drip: bytes  # sent every tick: a header line, or one byte of body
    closed_at: float | None = None


@dataclass
class TrickleRun:
    latencies: list[float] = field(default_factory=list)  # normal requests while the tricklers were all open
    held: list[tuple[float, int]] = field(default_factory=list)  # (seconds since start, server sockets)


def start_tricklers() -> list[Trickler]:
    tricklers = []
    for index in range(TRICKLERS):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((SOURCES[index % len(SOURCES)], 0))
        tricklers.append(Trickler(sock, b""))
    return tricklers


def test_a_thousand_trickling_clients_cost_sockets_for_a_bounded_time_and_nothing_else(herald: Herald):
    baseline = open_sockets(herald.pid)
    tricklers = start_tricklers()
    started = time.perf_counter()
    for index, trickler in enumerate(tricklers):
        trickler.sock.connect(herald.address)
        if index % 2:
            trickler.sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
            trickler.drip = f"X-Trickle-{index}: x\r\n".encode()
        else:
            trickler.sock.sendall(b"POST /api/v1/events HTTP/1.1\r\nHost: localhost\r\n"
                                  b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
            trickler.drip = b" "
        trickler.sock.setblocking(False)
    opened = time.perf_counter() - started

    run = TrickleRun()
    feed = f"Authorization: Bearer {herald.key}\r\n"
    while time.perf_counter() - started < 3 * DEADLINE and any(t.closed_at is None for t in tricklers):
        for trickler in tricklers:
            if trickler.closed_at is not None:
                continue
            try:
                if trickler.sock.recv(1024) == b"":
                    trickler.closed_at = time.perf_counter() - started
                    continue
                pytest.fail("a trickling connection got an answer")
            except BlockingIOError:
                pass
            except ConnectionResetError:
                trickler.closed_at = time.perf_counter() - started
                continue
            try:
                trickler.sock.send(trickler.drip)
            except (BrokenPipeError, ConnectionResetError):
                trickler.closed_at = time.perf_counter() - started
        run.held.append((round(time.perf_counter() - started, 2), open_sockets(herald.pid)))
        all_open = all(t.closed_at is None for t in tricklers)
        for _ in range(3):
            for target, headers in (("/healthz", ""), ("/api/v1/feed", feed)):
                latency = timed_request(herald, target, headers)
                if all_open:
                    run.latencies.append(latency)
        time.sleep(0.25)

    closed = sorted(t.closed_at for t in tricklers if t.closed_at is not None)
    for trickler in tricklers:
        trickler.sock.close()
    print(f"\n{TRICKLERS} tricklers opened in {opened:.2f} s; {len(run.latencies)} normal requests meanwhile, "
          f"slowest {max(run.latencies) * 1000:.1f} ms, median {sorted(run.latencies)[len(run.latencies) // 2] * 1000:.1f} ms; "
          f"closed by the server between {closed[0]:.2f} s and {closed[-1]:.2f} s; server sockets over time {run.held}")

    assert len(closed) == TRICKLERS, f"{TRICKLERS - len(closed)} trickling connections were still open"
    assert closed[0] >= DEADLINE * 0.9, f"a connection was cut off before its deadline, at {closed[0]:.2f} s"
    assert closed[-1] <= opened + DEADLINE + 1.5, f"the last trickler was closed at {closed[-1]:.2f} s"
    assert max(count for _, count in run.held) >= baseline + TRICKLERS, "the tricklers were not all connected at once"
    assert len(run.latencies) >= 6, "too few normal requests while the tricklers were open"
    assert max(run.latencies) < FAST, f"a normal request took {max(run.latencies) * 1000:.0f} ms"
    time.sleep(0.5)
    assert open_sockets(herald.pid) <= baseline + 5, "the server holds sockets of the tricklers"


@pytest.fixture(scope="module")
def herald_behind_proxy(tmp_path_factory, herald_cli, herald_serve):
    """No per-address limit: every connection of wrk comes from 127.0.0.1, as from a reverse proxy."""
    context, key = serve(tmp_path_factory, herald_cli, herald_serve, "herald-keep-alive-rounds",
                         "--max-connections-per-address", "0")
    with context as server:
        host, port = server.base_url.removeprefix("http://").rsplit(":", 1)
        yield Herald(address=(host, int(port)), pid=server.pid, key=key)


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (apt-get install wrk)")
def test_rounds_of_a_thousand_keep_alive_clients_leave_the_server_answering_at_once(herald_behind_proxy: Herald):
    herald = herald_behind_proxy
    baseline = open_sockets(herald.pid)
    url = f"http://{herald.address[0]}:{herald.address[1]}/healthz"
    figures = []
    for round_number in range(1, 5):
        output = subprocess.run(["wrk", "-t2", "-c1000", "-d3s", url], capture_output=True, text=True, timeout=30).stdout
        rate = next((line.split()[1] for line in output.splitlines() if line.startswith("Requests/sec")), "?")
        time.sleep(0.2)
        latency = timed_request(herald, "/healthz")
        held = open_sockets(herald.pid)
        figures.append((round_number, rate, f"{latency * 1000:.1f} ms", held))
        assert latency < FAST, f"after round {round_number} /healthz took {latency * 1000:.0f} ms"
        assert held <= baseline + 5, f"after round {round_number} the server still holds {held - baseline} sockets"
    print(f"\n(round, wrk requests/s, next /healthz, server sockets): {figures}")


@pytest.mark.parametrize("option, environment, value, says", [
    ("--head-timeout", "HERALD_HEAD_TIMEOUT", "0", "The request head timeout in seconds must be from 1 to 600, not 0."),
    ("--body-grace", "HERALD_BODY_GRACE", "601", "The request body grace in seconds must be from 1 to 600, not 601."),
    ("--min-body-rate", "HERALD_MIN_BODY_RATE", "5", "The minimum body rate in bytes per second must be from 100 to 10485760, not 5."),
    ("--max-connections", "HERALD_MAX_CONNECTIONS", "10", "The connection limit must be from 16 to 1048576, not 10."),
    ("--max-connections-per-address", "HERALD_MAX_CONNECTIONS_PER_ADDRESS", "-1",
     "The connection limit per address must be from 0 to 1048576, not -1."),
])
def test_limits_out_of_range_are_refused_at_start(tmp_path, herald_binary, option, environment, value, says):
    command = [str(herald_binary), "serve", "--db", str(tmp_path / "h.sqlite"), "--port", "0", "--resources", str(REPO_ROOT)]
    for arguments, env in (([f"{option}={value}"], {}), ([], {environment: value})):
        result = subprocess.run(command + arguments, capture_output=True, text=True, timeout=30,
                                env={**os.environ, **env})
        assert result.returncode != 0, f"{arguments or env} was accepted"
        assert says in result.stderr, result.stderr
