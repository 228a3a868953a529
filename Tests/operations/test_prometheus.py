"""The Grafana dashboard against a real Prometheus: Debian's `prometheus` scrapes a running Herald's metrics
listener once a second while the test sends the traffic an operator's dashboard shows (console pages, feed
200s and 304s, event batches, a client over the per-address limit, a client that never sends its request
head), then every query of docs/grafana-dashboard.json is evaluated through Prometheus's HTTP API and must
return data: at least one series with a finite number, and none infinite (a quantile past the last bucket).
A query that returns nothing is a panel that says "No data" on a healthy server (as a share whose numerator
has no series yet did), which is what this test is for. A quantile of a route without requests in the
window is NaN, as Prometheus defines it: Grafana draws no line for it.

Prometheus runs on a free loopback port with its data in the test's temporary folder and is stopped after.
"""

from __future__ import annotations

import json
import math
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest

from test_metrics import fetch, free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = REPO_ROOT / "docs" / "grafana-dashboard.json"
SCRAPE_SECONDS = 1
# Every `rate(…[5m])` needs two samples of a series; histogram quantiles need observations between them.
SCRAPES_NEEDED = 4


def dashboard_queries() -> list[tuple[str, str]]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [(panel["title"], target["expr"]) for panel in dashboard["panels"] for target in panel.get("targets", [])]


def prometheus_query(base: str, expression: str) -> dict:
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": expression})
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.2)
    pytest.fail(f"gave up waiting for {what}")


@pytest.fixture(scope="module")
def prometheus_binary() -> str:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("Debian's prometheus is not installed: `make test-deps` installs it")
    return binary


def send_traffic(server, key: str, campaign: int) -> None:
    """One round of what the dashboard's panels count."""
    auth = {"Authorization": f"Bearer {key}"}
    assert fetch(server.url("/login"))[0] in (200, 303)
    status, headers, _ = fetch(server.url("/api/v1/feed"), auth)
    assert status == 200
    assert fetch(server.url("/api/v1/feed"), {**auth, "If-None-Match": headers["ETag"]})[0] == 304
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    batch = {"events": [{"id": str(uuid.uuid4()), "type": "impression", "campaignId": campaign, "platform": "ios",
                         "installationId": "iid-" + str(index), "occurredAt": now} for index in range(5)]}
    status, _, body = fetch(server.url("/api/v1/events"), {**auth, "Content-Type": "application/json"}, json.dumps(batch).encode(), "POST")
    assert status == 200, body


def test_every_dashboard_query_returns_data_from_a_real_prometheus(tmp_path, herald_cli, herald_serve, prometheus_binary):
    database = tmp_path / "herald.sqlite"
    app_id = herald_cli("app", "create", "--name", "Shop", "--platform", "ios", database=database, cwd=tmp_path).split()[-1]
    key = herald_cli("key", "create", "--app", app_id, "--name", "sdk", "--scope", "feed:read", "--scope", "events:write",
                     "--scope", "campaigns:write", database=database, cwd=tmp_path).split()[-1]
    metrics_port, prometheus_port = free_port(), free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n"
        f"  scrape_interval: {SCRAPE_SECONDS}s\n"
        f"  evaluation_interval: {SCRAPE_SECONDS}s\n"
        "scrape_configs:\n"
        "  - job_name: herald\n"
        "    static_configs:\n"
        f"      - targets: ['127.0.0.1:{metrics_port}']\n")
    with herald_serve(tmp_path, database, "--metrics-port", str(metrics_port), "--head-timeout", "1",
                      "--max-connections-per-address", "8") as server:
        status, _, body = fetch(server.url("/api/v1/campaigns"), {"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
                                json.dumps({"app": int(app_id), "name": "Welcome", "message": {
                                    "layout": "modal", "title": {"text": "Hello"}}}).encode(), "POST")
        assert status == 201, body
        campaign = json.loads(body)["id"]
        prometheus = subprocess.Popen(
            [prometheus_binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{prometheus_port}"],
            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "wb"))
        base = f"http://127.0.0.1:{prometheus_port}"
        held: list[socket.socket] = []
        try:
            def scraped() -> bool:
                try:
                    result = prometheus_query(base, 'up{job="herald"}')["data"]["result"]
                except OSError:
                    return False
                return bool(result) and result[0]["value"][1] == "1"

            wait_for(scraped, 60, "Prometheus to scrape Herald: " + (tmp_path / "prometheus.log").read_text()[-2000:])
            # Over the per-address limit (two refused, counted by reason); the eight let in never send a head
            # and are closed as slow clients after the 1 s head timeout, which frees the address for the traffic.
            host, port = server.base_url.removeprefix("http://").rsplit(":", 1)
            for _ in range(10):
                held.append(socket.create_connection((host, int(port)), timeout=5))
            time.sleep(2.5)
            started = time.monotonic()
            while time.monotonic() - started < SCRAPES_NEEDED * SCRAPE_SECONDS + 2:
                send_traffic(server, key, campaign)
                time.sleep(0.1)

            def enough_samples() -> bool:
                result = prometheus_query(base, f'count_over_time(up{{job="herald"}}[5m]) >= {SCRAPES_NEEDED}')["data"]["result"]
                return bool(result)

            wait_for(enough_samples, 30, f"{SCRAPES_NEEDED} scrapes")
            problems = []
            queries = dashboard_queries()
            assert len(queries) >= 10, "the dashboard lost its panels"
            for title, expression in queries:
                answer = prometheus_query(base, expression)
                if answer["status"] != "success":
                    problems.append(f"{title}: {expression}: {answer}")
                    continue
                series = answer["data"]["result"]
                values = [float(item["value"][1]) for item in series]
                if not series:
                    problems.append(f"{title}: no data from {expression}")
                elif not any(math.isfinite(number) for number in values) or any(math.isinf(number) for number in values):
                    problems.append(f"{title}: {values} from {expression}")
            assert not problems, "\n".join(problems)
            refused = prometheus_query(base, 'sum(herald_http_connections_refused_total{reason="address_limit"})')["data"]["result"]
            assert refused and float(refused[0]["value"][1]) >= 1, "the over-limit connections were not counted"
        finally:
            for connection in held:
                connection.close()
            prometheus.terminate()
            prometheus.wait(timeout=20)
