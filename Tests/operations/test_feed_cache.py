"""nginx in front of Herald, with the configuration Herald ships (packaging/nginx/herald.conf) run as it
is: only its upstream address, its listening address and its cache folder are replaced.

What it must do (docs/scaling.md): polls through the cache reach Herald once per app and encoding
while the feed is fresh (Herald's own feed counter, read from its metrics, says how many reached it),
including many at once on a cold cache; devices' If-None-Match is answered by the cache; gzipped and
plain copies are kept apart and each inflates to Herald's feed; a change reaches devices polling
through the cache within Herald's shared-cache time; errors and a test device's personal feed are
never stored.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHIPPED_CONFIG = REPO_ROOT / "packaging" / "nginx" / "herald.conf"
SHARED_CACHE_SECONDS = 10  # FeedService.sharedCacheSeconds: Herald's s-maxage


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch(port: int, path: str, headers: dict | None = None, data: bytes | None = None, method: str = "GET"):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, body=data, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, {name.lower(): value for name, value in answer.getheaders()}, answer.read()
    finally:
        connection.close()


def replaced_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"packaging/nginx/herald.conf should hold {old!r} once; the test replaces it"
    return text.replace(old, new)


class Nginx:
    """nginx in the foreground, in a folder of its own, with the shipped file included in its http block."""

    def __init__(self, folder: Path, herald_port: int):
        self.port = free_port()
        folder.mkdir()
        config = SHIPPED_CONFIG.read_text()
        config = replaced_once(config, "server 127.0.0.1:8080;", f"server 127.0.0.1:{herald_port};")
        config = replaced_once(config, "listen 80;", f"listen 127.0.0.1:{self.port};")
        config = replaced_once(config, "/var/cache/nginx/herald", str(folder / "cache"))
        self.access_log = folder / "access.log"
        config = replaced_once(config, "/var/log/nginx/herald.access.log", str(self.access_log))
        (folder / "herald.conf").write_text(config)
        # As root, nginx's workers would run as nobody, who cannot reach pytest's private folders.
        user = "user root;" if os.geteuid() == 0 else ""
        (folder / "nginx.conf").write_text(f"""
{user}
worker_processes 1; daemon off; pid {folder}/nginx.pid; error_log {folder}/error.log info;
events {{ worker_connections 256; }}
http {{ access_log off; include {folder}/herald.conf; }}
""")
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        self.log = folder / "error.log"
        self.process = subprocess.Popen([binary, "-p", str(folder), "-e", str(self.log), "-c", str(folder / "nginx.conf")])
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.05)
        self.stop()
        pytest.fail(f"nginx did not start with the shipped configuration: {self.log.read_text() if self.log.exists() else ''}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Stack:
    def __init__(self, herald, nginx: Nginx, metrics_port: int):
        self.herald = herald
        self.herald_port = int(herald.base_url.rsplit(":", 1)[1])
        self.nginx = nginx
        self.metrics_port = metrics_port

    def feed_answers(self) -> int:
        """How many feed answers (200 and 304) Herald itself gave: herald_feed_answers_total."""
        status, _, body = fetch(self.metrics_port, "/metrics")
        assert status == 200
        return round(sum(float(line.rsplit(" ", 1)[1]) for line in body.decode().splitlines()
                         if line.startswith("herald_feed_answers_total{")))

    def poll(self, key: str, **headers) -> tuple[int, dict, bytes]:
        return fetch(self.nginx.port, "/api/v1/feed", {"Authorization": f"Bearer {key}", **headers})

    def direct(self, key: str, **headers) -> tuple[int, dict, bytes]:
        return fetch(self.herald_port, "/api/v1/feed", {"Authorization": f"Bearer {key}", **headers})

    def publish(self, app: tuple[str, str], title: str, test: bool = False) -> int:
        """A campaign through Herald's API with the app's key: published, or a draft to test on devices."""
        app_id, key = app
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        campaign = {"app": int(app_id), "name": title, "testOnDevice": test, "triggers": [{"event": "app_launch"}],
                    "message": {"layout": "banner", "title": {"text": title}, "body": {"text": "Welcome"}}}
        status, _, body = fetch(self.herald_port, "/api/v1/campaigns", headers, json.dumps(campaign).encode(), "POST")
        assert status == 201, body
        identifier = json.loads(body)["id"]
        if not test:
            status, _, body = fetch(self.herald_port, f"/api/v1/campaigns/{identifier}/publish", headers, b"", "POST")
            assert status == 200, body
        return identifier


def titles(body: bytes) -> list[str]:
    return [campaign["message"]["title"]["text"] for campaign in json.loads(body)["campaigns"]]


@pytest.fixture(scope="module")
def stack(tmp_path_factory, herald_cli, herald_serve):
    workdir = tmp_path_factory.mktemp("herald-feed-cache")
    database = workdir / "herald.sqlite"

    def app_with_key(name: str) -> tuple[str, str]:
        app_id = herald_cli("app", "create", "--name", name, "--platform", "ios", database=database, cwd=workdir).split()[-1]
        key = herald_cli("key", "create", "--app", app_id, "--name", "sdk", "--scope", "feed:read", "--scope", "campaigns:write",
                         database=database, cwd=workdir).split()[-1]
        return app_id, key

    apps = {name: app_with_key(name) for name in ("Shop", "Cold", "Change", "Tester")}
    herald_cli("device", "add", "--app", apps["Tester"][0], "--installation", "iid-tester", "--name", "QA",
               database=database, cwd=workdir)
    metrics_port = free_port()
    with herald_serve(workdir, database, "--metrics-port", str(metrics_port),
                      "--trusted-proxy", "127.0.0.1", "--max-connections-per-address", "0") as herald:
        nginx = Nginx(workdir / "nginx", int(herald.base_url.rsplit(":", 1)[1]))
        try:
            stack = Stack(herald, nginx, metrics_port)
            for name, app in apps.items():
                stack.publish(app, f"{name} sale")
            yield stack, apps
        finally:
            nginx.stop()


def test_two_polls_through_the_cache_reach_herald_once(stack):
    stack, apps = stack
    key = apps["Shop"][1]
    _, direct_headers, direct = stack.direct(key)
    before = stack.feed_answers()
    status, first_headers, first = stack.poll(key, **{"Accept-Encoding": "gzip, deflate, br"})
    status_again, headers_again, again = stack.poll(key, **{"Accept-Encoding": "gzip"})
    assert (status, status_again) == (200, 200)
    assert (first_headers["x-cache-status"], headers_again["x-cache-status"]) == ("MISS", "HIT")
    assert stack.feed_answers() - before == 1, "the second poll reached Herald"
    assert first_headers["content-encoding"] == "gzip" and first == again
    assert gzip.decompress(first) == direct, "the cached gzip copy is not Herald's feed"
    assert len(first) < len(direct)
    assert first_headers["cache-control"] == f"public, max-age=0, s-maxage={SHARED_CACHE_SECONDS}"

    # A device revalidating its copy is answered by the cache, without Herald.
    status, headers, body = stack.poll(key, **{"Accept-Encoding": "gzip", "If-None-Match": first_headers["etag"]})
    assert status == 304 and body == b""
    assert headers["etag"] == first_headers["etag"]
    assert stack.feed_answers() - before == 1

    # The plain copy is kept apart: one more request to Herald, then from the cache, also for gzip;q=0.
    status, plain_headers, plain = stack.poll(key)
    assert status == 200 and "content-encoding" not in plain_headers and plain == direct
    assert plain_headers["etag"] == direct_headers["etag"] != first_headers["etag"]
    status, refused_headers, refused = stack.poll(key, **{"Accept-Encoding": "gzip;q=0, identity"})
    assert refused_headers["x-cache-status"] == "HIT" and refused == direct
    assert stack.feed_answers() - before == 2


def test_a_304_from_herald_declares_no_length_and_wrk_reads_it(stack):
    """A 304 carries no Content-Length, as nginx's: RFC 9110 §8.6 allows only the 200's length or none, and with
    the 200's length wrk (and clients built like it) waited for a body that never came."""
    stack, apps = stack
    key = apps["Shop"][1]
    for encoding in ({"Accept-Encoding": "gzip"}, {}):
        status, headers, body = stack.direct(key, **encoding)
        assert status == 200
        status, headers, empty = stack.direct(key, **encoding, **{"If-None-Match": headers["etag"]})
        assert status == 304 and empty == b""
        assert "content-length" not in headers and "transfer-encoding" not in headers
    etag = stack.direct(key, **{"Accept-Encoding": "gzip"})[1]["etag"]
    wrk = shutil.which("wrk")
    assert wrk, "wrk is installed by make test"
    run = subprocess.run([wrk, "-t1", "-c4", "-d1s", "--timeout", "1s", "-H", f"Authorization: Bearer {key}",
                          "-H", "Accept-Encoding: gzip", "-H", f"If-None-Match: {etag}", f"http://127.0.0.1:{stack.herald_port}/api/v1/feed"],
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    answered = int(run.stdout.split(" requests in ")[0].split()[-1])
    assert answered > 50, run.stdout
    assert "Non-2xx or 3xx responses" not in run.stdout and "timeout" not in run.stdout, run.stdout


def test_nginx_sets_the_request_id_and_logs_no_query(stack):
    """Herald believes X-Request-Id from its trusted proxy: nginx sets its own, whatever the client sent. And a
    beacon's `?key=` never reaches nginx's access log, which writes paths without their query."""
    stack, _ = stack
    status, headers, _ = fetch(stack.nginx.port, "/healthz", {"X-Request-Id": "chosen-by-the-client"})
    assert status == 200
    request_id = headers["x-request-id"]
    assert request_id != "chosen-by-the-client" and re.fullmatch(r"[0-9a-f]{32}", request_id), request_id

    secret = "hrld_" + "Sekr3tBeaconKey" * 3
    status, headers, body = fetch(stack.nginx.port, f"/api/v1/events?key={secret}&x=1", {"Content-Type": "text/plain"},
                                  b'{"events": []}', "POST")
    assert status == 401, body
    beacon_id = headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", beacon_id)
    log = ""
    for _ in range(50):  # nginx writes the line when the request is done
        log = stack.nginx.access_log.read_text()
        if beacon_id in log:
            break
        time.sleep(0.05)
    assert f'"GET /healthz HTTP/1.1" 200' in log and f"request_id={request_id}" in log
    assert f'"POST /api/v1/events HTTP/1.1" 401' in log and f"request_id={beacon_id}" in log
    assert secret not in log and "key=" not in log and "x=1" not in log


def test_many_polls_at_once_on_a_cold_cache_reach_herald_once(stack):
    stack, apps = stack
    key = apps["Cold"][1]
    before = stack.feed_answers()
    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(lambda _: stack.poll(key, **{"Accept-Encoding": "gzip"}), range(40)))
    assert {status for status, _, _ in answers} == {200}
    assert len({body for _, _, body in answers}) == 1
    assert titles(gzip.decompress(answers[0][2])) == ["Cold sale"]
    assert stack.feed_answers() - before == 1


def test_a_change_reaches_devices_polling_through_the_cache_within_its_shared_time(stack):
    stack, apps = stack
    key = apps["Change"][1]
    status, headers, body = stack.poll(key, **{"Accept-Encoding": "gzip"})
    assert titles(gzip.decompress(body)) == ["Change sale"]
    published = time.monotonic()
    stack.publish(apps["Change"], "Flash sale")
    while True:
        status, headers, body = stack.poll(key, **{"Accept-Encoding": "gzip"})
        assert status == 200
        if "Flash sale" in titles(gzip.decompress(body)):
            break
        assert time.monotonic() - published < SHARED_CACHE_SECONDS + 3, "the change did not come through the cache in time"
        time.sleep(0.25)
    waited = time.monotonic() - published
    print(f"change through the cache after {waited:.1f} s (shared cache time {SHARED_CACHE_SECONDS} s)")
    assert set(titles(gzip.decompress(body))) == {"Change sale", "Flash sale"}


def test_errors_and_a_test_devices_feed_are_never_stored(stack):
    stack, apps = stack
    before = stack.feed_answers()
    for _ in range(2):
        status, headers, _ = stack.poll("hrld_not_a_key")
        assert status == 401 and headers["x-cache-status"] == "MISS"

    key = apps["Tester"][1]
    stack.publish(apps["Tester"], "Tester trial", test=True)
    # On a miss, the test device's request reaches Herald and gets its own feed, which is not kept...
    status, headers, body = stack.poll(key, **{"X-Installation-Id": "iid-tester", "Accept-Encoding": "gzip"})
    assert status == 200 and headers["cache-control"] == "private, no-cache"
    assert titles(gzip.decompress(body)) == ["Tester trial", "Tester sale"]
    # ...so the next device does not get it: a miss again, the app's feed, and that one is kept.
    status, headers, body = stack.poll(key, **{"X-Installation-Id": "iid-someone", "Accept-Encoding": "gzip"})
    assert headers["x-cache-status"] == "MISS" and titles(gzip.decompress(body)) == ["Tester sale"]
    status, headers, body = stack.poll(key, **{"Accept-Encoding": "gzip"})
    assert headers["x-cache-status"] == "HIT"
    assert stack.feed_answers() - before == 2, "401s are counted apart; two feed answers reached Herald"
