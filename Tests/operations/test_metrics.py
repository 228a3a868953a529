"""`herald serve --metrics-port`: Prometheus metrics on a listener of their own.

Starts the real binary with a metrics port, makes requests whose effect on the counters is known (a
console page, a feed answer and its 304, an event batch with a duplicate and a bad event), and reads
/metrics with prometheus-client's parser before and after: each counter must move by exactly that
much. Also: /metrics is not served on the console's port, and without --metrics-port nothing listens.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import uuid
from datetime import datetime, timezone

import pytest
from prometheus_client.parser import text_string_to_metric_families


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch(url: str, headers: dict | None = None, data: bytes | None = None, method: str = "GET"):
    """One request on a fresh connection, redirects not followed (each answer is one count)."""
    address, _, path = url.removeprefix("http://").partition("/")
    host, port = address.rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request(method, "/" + path, body=data, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        connection.close()


def samples(metrics_url: str) -> dict[tuple[str, frozenset], float]:
    status, headers, body = fetch(metrics_url)
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    values = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            values[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return values


def value(values, name: str, **labels) -> float:
    return values.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture(scope="module")
def herald(tmp_path_factory, herald_cli, herald_serve):
    workdir = tmp_path_factory.mktemp("herald-metrics")
    database = workdir / "herald.sqlite"
    app_id = herald_cli("app", "create", "--name", "Shop", "--platform", "ios", database=database, cwd=workdir).split()[-1]
    key = herald_cli("key", "create", "--app", app_id, "--name", "sdk", "--scope", "feed:read", "--scope", "events:write",
                     "--scope", "campaigns:write", database=database, cwd=workdir).split()[-1]
    metrics_port = free_port()
    with herald_serve(workdir, database, "--metrics-port", str(metrics_port)) as server:
        status, _, body = fetch(server.url("/api/v1/campaigns"), {"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
                                json.dumps({"app": int(app_id), "name": "Welcome", "message": {
                                    "layout": "card", "title": {"text": "Hello"}, "body": {"text": "Welcome"}}}).encode(), "POST")
        assert status in (200, 201), body
        yield server, key, json.loads(body)["id"], f"http://127.0.0.1:{metrics_port}/metrics"


def event(campaign: int, event_id: str) -> dict:
    return {"id": event_id, "type": "impression", "campaignId": campaign, "platform": "ios", "installationId": "iid-1",
            "occurredAt": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}


def test_counters_move_by_exactly_what_was_asked(herald):
    server, key, campaign, metrics_url = herald
    before = samples(metrics_url)

    login_status = fetch(server.url("/login"))[0]  # no user yet: sent on to /setup
    assert login_status == 303
    campaign_page_status = fetch(server.url(f"/campaigns/{campaign}"))[0]  # no user yet: sent on to /setup
    assert campaign_page_status == 303
    assert fetch(server.url("/no/such/page/" + uuid.uuid4().hex))[0] == 404
    auth = {"Authorization": f"Bearer {key}"}
    status, headers, _ = fetch(server.url("/api/v1/feed"), auth)
    assert status == 200
    assert fetch(server.url("/api/v1/feed"), {**auth, "If-None-Match": headers["ETag"]})[0] == 304
    repeated = str(uuid.uuid4())
    batch = {"events": [event(campaign, repeated), event(campaign, str(uuid.uuid4())), {"id": "not-a-uuid", "type": "impression"}]}
    status, _, body = fetch(server.url("/api/v1/events"), {**auth, "Content-Type": "application/json"}, json.dumps(batch).encode(), "POST")
    assert status == 200, body
    assert json.loads(body)["accepted"] == 2
    status, _, body = fetch(server.url("/api/v1/events"), {**auth, "Content-Type": "application/json"},
                            json.dumps({"events": [event(campaign, repeated)]}).encode(), "POST")
    assert json.loads(body)["duplicates"] == 1

    after = samples(metrics_url)

    def moved(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("herald_http_requests_total", method="GET", route="/login", status=str(login_status)) == 1
    # The pattern, never the raw path: one series for every campaign.
    assert moved("herald_http_requests_total", method="GET", route="/campaigns/{id}", status=str(campaign_page_status)) == 1
    assert not any("/campaigns/" + str(campaign) in dict(labels).get("route", "") for _, labels in after)
    assert moved("herald_http_requests_total", method="GET", route="unmatched", status="404") == 1
    assert moved("herald_http_requests_total", method="GET", route="/api/v1/feed", status="200") == 1
    assert moved("herald_http_requests_total", method="GET", route="/api/v1/feed", status="304") == 1
    assert moved("herald_http_request_duration_seconds_count", route="/api/v1/feed") == 2
    assert moved("herald_feed_answers_total", status="200") == 1
    assert moved("herald_feed_answers_total", status="304") == 1
    assert moved("herald_events_total", outcome="accepted") == 2
    assert moved("herald_events_total", outcome="duplicate") == 1
    assert moved("herald_events_total", outcome="rejected") == 1
    assert moved("herald_group_commit_size_count") == 2
    assert moved("herald_group_commit_wait_seconds_count") == 2
    assert moved("herald_database_statement_duration_seconds_count") > 0
    assert value(after, "herald_process_resident_memory_bytes") > 1_000_000
    assert 0 < value(after, "herald_process_start_time_seconds") <= datetime.now(timezone.utc).timestamp()
    assert ("herald_http_open_connections", frozenset({("listener", "console")})) in after


def test_only_metrics_on_the_metrics_listener_and_never_on_the_console(herald):
    server, _, _, metrics_url = herald
    assert fetch(server.url("/metrics"))[0] == 404
    assert fetch(metrics_url.removesuffix("/metrics") + "/login")[0] == 404
    assert fetch(metrics_url + "/more")[0] == 404
    assert fetch(metrics_url, method="POST", data=b"")[0] == 405


def listening_ports(pid: int) -> set[int]:
    """The TCP ports process `pid` listens on: its socket inodes matched against /proc/net/tcp{,6}."""
    inodes = set()
    for entry in os.scandir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(entry.path)
        except FileNotFoundError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def test_without_a_metrics_port_nothing_listens_for_metrics(tmp_path, herald_serve):
    with herald_serve(tmp_path, tmp_path / "herald.sqlite", "--metrics-host", "127.0.0.1") as server:
        assert fetch(server.url("/metrics"))[0] == 404
        assert listening_ports(server.pid) == {int(server.base_url.rsplit(":", 1)[1])}


def test_the_metrics_listener_is_the_only_other_port(herald):
    server, _, _, metrics_url = herald
    console_port = int(server.base_url.rsplit(":", 1)[1])
    metrics_port = int(metrics_url.removesuffix("/metrics").rsplit(":", 1)[1])
    assert listening_ports(server.pid) == {console_port, metrics_port}


def test_idle_connections_never_keep_a_scraper_out(herald):
    """24 loopback connections that send nothing (8 from each of three addresses) used to fill the metrics
    listener's 16 places; now the longest idle gives way, and a scrape from any address is answered at once."""
    _, _, _, metrics_url = herald
    port = int(metrics_url.removesuffix("/metrics").rsplit(":", 1)[1])
    idle = []
    try:
        for index in range(24):
            connection = socket.socket()
            connection.bind((f"127.0.0.{1 + index % 3}", 0))
            connection.connect(("127.0.0.1", port))
            idle.append(connection)
        for _ in range(3):
            started = datetime.now(timezone.utc)
            assert samples(metrics_url), "a scrape is answered"
            assert (datetime.now(timezone.utc) - started).total_seconds() < 2
    finally:
        for connection in idle:
            connection.close()
