"""Helpers the benchmarks share: the release binary and its command line, a server on a free loopback
port with its request log in a file, persistent HTTP connections that fail loudly on a non-2xx answer,
signing in to the console, realistic campaigns of every layout, time-ordered event ids, building a C
reference from bench/reference/, wrk, and the resident memory of a process. Imported by the benchmarks."""

from __future__ import annotations

import http.client
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINARY = ROOT / ".build" / "release" / "herald"
# Herald's request log line at the info level, in logfmt (the default):
# `… msg=request method=GET ms=3.20 path=/campaigns request_id=… status=200` (the path without its query).
# Groups: 1 method, 3 path, 4 status, "ms" milliseconds.
LOG_LINE = re.compile(r"msg=request method=(GET|POST|PUT|DELETE|HEAD) ms=(?P<ms>[0-9.]+) path=(\S+) request_id=\S+ status=(\d{3})")


class BenchError(Exception):
    """A failure that ends the benchmark with a non-zero exit and a readable message."""


def ensure_binary() -> None:
    """The release binary as shipped (`make build`: the Swift runtime linked in)."""
    if not BINARY.exists():
        subprocess.run(["make", "--no-print-directory", "build"], cwd=ROOT, check=True)


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def compile_reference(name: str, folder: Path, *flags: str) -> Path:
    """bench/reference/NAME.c built with `cc -O2` into `folder`, `flags` (include folders, libraries) after the source."""
    program = folder / name
    subprocess.run(["cc", "-O2", "-o", str(program), str(ROOT / "bench" / "reference" / f"{name}.c"), *flags], check=True)
    return program


def ensure_wrk() -> None:
    if not shutil.which("wrk"):
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "wrk"], check=True,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})


def cli(*arguments: str, database: Path, stdin: str | None = None) -> str:
    result = subprocess.run([str(BINARY), *arguments, "--db", str(database), "--resources", str(ROOT)],
                            input=stdin, capture_output=True, text=True)
    if result.returncode != 0:
        raise BenchError(f"herald {' '.join(arguments)} failed ({result.returncode}): {result.stderr.strip()}")
    return result.stdout


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


class Server:
    """`herald serve` on a free loopback port, with `extra` arguments; stderr (the request log) goes to `log_path`."""

    def __init__(self, database: Path, log_path: Path, log_level: str = "info", extra: list[str] | tuple[str, ...] = (),
                 binary: Path | None = None):
        self.log_path = log_path
        self.log = open(log_path, "w")
        self.spawned = time.perf_counter()
        self.process = subprocess.Popen(
            [str(binary or BINARY), "serve", "--db", str(database), "--port", "0", "--log-level", log_level, "--resources", str(ROOT), *extra],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline()
        self.announced = time.perf_counter() - self.spawned  # seconds from spawn to the printed URL
        match = re.search(r"(http://\S+?)/ ", line)
        if not match:
            self.stop()
            raise BenchError(f"the server did not start: {line!r}; see {log_path}: {log_path.read_text()[-2000:]}")
        self.base = match.group(1)
        self.pid = self.process.pid

    def wait_ready(self, timeout: float = 30) -> float:
        """Polls /readyz until it answers 200; returns the seconds since the process was spawned."""
        url = urllib.parse.urlsplit(self.base)
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            connection = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
            try:
                connection.request("GET", "/readyz")
                response = connection.getresponse()
                response.read()
                if response.status == 200:
                    return time.perf_counter() - self.spawned
            except OSError:
                pass
            finally:
                connection.close()
            time.sleep(0.002)
        raise BenchError(f"/readyz did not answer 200 within {timeout} s")

    def log_offset(self) -> int:
        self.log.flush()
        return self.log_path.stat().st_size

    def server_times(self, offset: int, path: str, status: str = "200") -> list[float]:
        """Milliseconds of the logged requests for `path` (no query) after `offset` bytes of the log."""
        with open(self.log_path, "rb") as log:
            log.seek(offset)
            text = log.read().decode("utf-8", "replace")
        return [float(m.group("ms")) for m in LOG_LINE.finditer(text) if m.group(3) == path and m.group(4) == status]

    def stop(self) -> None:
        # A SIGTERM that arrives just after the server became ready is sometimes lost (the handler is
        # installed after the server starts serving), so a second one follows if the first did nothing.
        for attempt in (1, 2):
            if self.process.poll() is not None:
                break
            self.process.terminate()
            try:
                self.process.wait(timeout=5 if attempt == 1 else 25)
            except subprocess.TimeoutExpired:
                if attempt == 2:
                    self.process.kill()
                    self.process.wait()
        self.log.close()


class Client:
    """One persistent HTTP/1.1 connection. `request` raises BenchError on an answer outside `expect`
    (default: any 2xx), and reconnects once when the server closed an idle connection."""

    def __init__(self, base: str, key: str | None = None, cookie: str | None = None):
        self.url = urllib.parse.urlsplit(base)
        self.connection = http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=120)
        self.headers: dict[str, str] = {}
        if key:
            self.headers["Authorization"] = f"Bearer {key}"
        if cookie:
            self.headers["Cookie"] = cookie

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str = "application/json",
                expect: range | tuple = range(200, 300)):
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):
            try:
                self.connection.request(method, path, body=body, headers=headers)
                response = self.connection.getresponse()
                reply = response.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.connection.close()
                if attempt == 2:
                    raise
        if response.status not in expect:
            raise BenchError(f"{method} {path} answered {response.status}: {reply[:500]!r}")
        return response.status, response.headers, reply

    def close(self) -> None:
        self.connection.close()


def sign_in(base: str, email: str, password: str) -> Client:
    """Signs in through the login form (CSRF token from the page) and returns a client with the session cookie."""
    visitor = Client(base)
    _, headers, page = visitor.request("GET", "/login")
    cookie = (headers.get("Set-Cookie") or "").split(";")[0]
    token = re.search(rb'name="csrf_token" value="([^"]+)"', page)
    if not token:
        raise BenchError("no CSRF token on /login")
    form = urllib.parse.urlencode({"csrf_token": token.group(1).decode(), "email": email, "password": password}).encode()
    visitor.headers["Cookie"] = cookie
    status, headers, _ = visitor.request("POST", "/login", form, "application/x-www-form-urlencoded", expect=(302, 303))
    if headers.get("Location", "").startswith("/login"):
        raise BenchError("sign-in was refused")
    visitor.close()
    return Client(base, cookie=(headers.get("Set-Cookie") or cookie).split(";")[0])


# Campaigns of every layout, complete enough to publish, with names made of words to search.
LAYOUTS = ("card", "modal", "image_only", "banner", "slideup", "fullscreen")
ADJECTIVES = ("Spring", "Summer", "Autumn", "Winter", "Flash", "Weekend", "Holiday", "Loyalty", "Welcome", "Clearance")
SUBJECTS = ("sale", "offer", "survey", "update", "reminder", "launch", "upgrade", "bundle", "giveaway", "tips")
AUDIENCES = ("shoes", "jackets", "new users", "subscribers", "gamers", "travellers", "students", "families")


def campaign(index: int, app: int, layout: str | None = None) -> dict:
    """A realistic campaign document (docs/campaign-json.md) that may be published."""
    layout = layout or LAYOUTS[index % len(LAYOUTS)]
    words = f"{ADJECTIVES[index % len(ADJECTIVES)]} {SUBJECTS[(index // 10) % len(SUBJECTS)]} for {AUDIENCES[(index // 7) % len(AUDIENCES)]}"
    image = f"https://cdn.example.com/campaigns/{index}/portrait.png"
    title = {"text": f"{words} {index}", "color": "#1A73E8"}
    body = {"text": "Twenty percent off everything in the shop until Sunday night. Tap to see what is new."}
    action = {"url": f"https://example.com/offers/{index}"}
    message = {
        "card": {"title": title, "body": body, "imageUrl": image, "landscapeImageUrl": image.replace("portrait", "landscape"),
                 "backgroundColor": "#FFFFFF", "primaryAction": {"text": "Shop now", "buttonColor": "#CC1A73E8", **action},
                 "secondaryAction": {"text": "Later"}},
        "modal": {"title": title, "body": body, "imageUrl": image, "primaryAction": {"text": "See more", **action}, "backgroundColor": "#F5F5F5"},
        "image_only": {"imageUrl": image, "action": action},
        "banner": {"title": title, "body": body, "action": action, "dismiss": {"seconds": 12}},
        "slideup": {"body": body, "imageUrl": image, "action": action, "slideFrom": "bottom"},
        "fullscreen": {"title": title, "body": body, "imageUrl": image, "primaryAction": {"text": "Open", **action},
                       "secondaryAction": {"text": "Not now"}, "orientation": "any"},
    }[layout]
    triggers = [{"event": "app_launch", "filters": []}] if index % 3 else [
        {"event": "purchase", "filters": [{"property": "value", "op": "gte", "value": 10 + index % 50}]},
        {"event": "level_complete", "filters": [{"property": "level", "op": "eq", "value": index % 20}]}]
    return {"app": app, "name": f"{words} #{index}", "description": f"Benchmark campaign {index}: {words.lower()}.",
            "priority": 1 + index % 10, "schedule": {"start": None, "end": None, "timeZone": "Europe/Paris"},
            "triggers": triggers, "frequency": {"type": "every_n_days", "days": 1 + index % 14} if index % 2 else {"type": "once"},
            "targeting": {"platforms": ["ios", "android"], "languages": ["en", "fr"], "percentage": 50 + index % 51},
            "message": {"layout": layout, **message},
            "data": [{"key": "promo_code", "value": f"CODE{index}"}, {"key": "discount", "value": str(5 + index % 40)}]}


def feed_campaign(index: int, app: int) -> dict:
    """The card campaign bench/feed.py publishes (100 of them make a feed of about 68 KB)."""
    return {"app": app, "name": f"Campaign {index}", "priority": 1 + index % 10,
            "triggers": [{"event": "purchase", "filters": [{"property": "value", "op": "gte", "value": 10}]}],
            "message": {"layout": "card", "title": {"text": f"Spring sale {index}", "color": "#1A73E8"},
                        "body": {"text": "Twenty percent off everything in the shop until Sunday night."},
                        "imageUrl": f"https://example.com/images/{index}.png", "backgroundColor": "#FFFFFF",
                        "primaryAction": {"text": "Shop now", "url": "https://example.com/sale"}},
            "data": [{"key": "promo_code", "value": f"SPRING{index}"}, {"key": "discount", "value": "20"}]}


def uuid7(milliseconds: int | None = None) -> str:
    """A UUIDv7 as Sources/HeraldDelivery/TimeOrderedUUID.swift makes it: 48 bits of Unix
    milliseconds, version 7, RFC 9562 variant, the rest random."""
    if milliseconds is None:
        milliseconds = time.time_ns() // 1_000_000
    value = (milliseconds & ((1 << 48) - 1)) << 80 | int.from_bytes(secrets.token_bytes(10), "big")
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # variant 10
    return str(uuid.UUID(int=value))


def wrk(url: str, seconds: int, headers: dict[str, str], connections: int = 64, threads: int = 2) -> dict:
    """Runs wrk with latency figures; returns requests/s, p50 and p99 in ms, and errors."""
    script = "".join(f'wrk.headers["{name}"] = [[{value}]]\n' for name, value in headers.items())
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        lua.write(script)
    try:
        output = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", lua.name, url],
                                capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(lua.name)

    def latency(label: str) -> float:
        match = re.search(rf"{label}%\s+([0-9.]+)(us|ms|s)", output)
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    errors = re.search(r"Socket errors: (.*)", output)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    # "123456 requests in 5.00s, 1.23GB read": bytes on the wire per answer, headers included.
    total = re.search(r"(\d+) requests in [0-9.]+\w+, ([0-9.]+)([KMG]?B) read", output)
    wire = float(total.group(2)) * {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}[total.group(3)] / max(1, int(total.group(1)))
    return {"rps": float(re.search(r"Requests/sec:\s+([0-9.]+)", output).group(1)), "p50": latency("50"), "p99": latency("99"),
            "bytes": wire,
            "errors": (errors.group(1) if errors else "none") + (f", {non2xx.group(1)} non-2xx/3xx" if non2xx else ""),
            "failed": bool(errors or non2xx)}


def memory(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (peak) of a process, in MB (10^6 bytes), from /proc/PID/status."""
    figures = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            figures[name] = int(value.split()[0]) * 1024 / 1e6
    return figures


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"
