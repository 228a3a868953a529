"""Two Herald instances on one PostgreSQL, as behind a load balancer (docs/scaling.md).

What they must share: a campaign published through one is in the other's feed within a second (each
instance listens for the others' changes); an event batch sent to one and sent again to the other counts
once; a session made by signing in on one works on the other; a key revoked on one is refused by the other.

Runs only with HERALD_TEST_ENGINE=postgres (make test runs it so, beside a PostgreSQL of its own).
"""

from __future__ import annotations

import datetime
import http.client
import json
import os
import re
import time
import urllib.parse
import uuid

import pytest

ENGINE = os.environ.get("HERALD_TEST_ENGINE", "sqlite")

pytestmark = pytest.mark.skipif(ENGINE != "postgres", reason="several instances share a PostgreSQL database")

URLENCODED = "application/x-www-form-urlencoded"


def call(server, method: str, path: str, headers: dict | None = None, body: bytes | None = None):
    host, port = server.base_url.removeprefix("http://").rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, answer.getheaders(), answer.read()
    finally:
        connection.close()


def cookie(headers, name: str) -> str:
    for header, value in headers:
        if header.lower() == "set-cookie" and value.startswith(name + "="):
            return value.split(";", 1)[0].split("=", 1)[1]
    raise AssertionError(f"no {name} cookie in {headers}")


def csrf_token(body: bytes) -> str:
    match = re.search(rb'name="csrf_token" value="([^"]+)"', body)
    assert match, "the page has no form token"
    return match.group(1).decode()


@pytest.fixture(scope="module")
def pair(tmp_path_factory, herald_cli, herald_serve):
    workdir = tmp_path_factory.mktemp("herald-instances")
    database = workdir / "herald.sqlite"  # stands for one PostgreSQL database in this mode
    email, password = "admin@example.com", "two-instances-passphrase"
    herald_cli("user", "create", "--email", email, "--role", "admin", "--password-stdin",
               database=database, cwd=workdir, stdin=password + "\n")
    app_id = herald_cli("app", "create", "--name", "Shop", "--platform", "ios", database=database, cwd=workdir).split()[-1]
    arguments = ["key", "create", "--app", app_id, "--name", "sdk"]
    for scope in ("feed:read", "events:write", "campaigns:read", "campaigns:write"):
        arguments += ["--scope", scope]
    key = herald_cli(*arguments, database=database, cwd=workdir).split()[-1]
    first_folder, second_folder = workdir / "a", workdir / "b"
    first_folder.mkdir()
    second_folder.mkdir()
    with herald_serve(first_folder, database) as first, herald_serve(second_folder, database) as second:
        yield first, second, int(app_id), key, (email, password)


def api(server, key: str, method: str, path: str, document=None, headers: dict | None = None):
    body = json.dumps(document).encode() if document is not None else None
    status, answer_headers, answer = call(server, method, path, {"Authorization": f"Bearer {key}", "Content-Type": "application/json",
                                                                 **(headers or {})}, body)
    return status, dict((name.lower(), value) for name, value in answer_headers), answer


def test_a_campaign_published_through_one_instance_is_in_the_others_feed_within_a_second(pair):
    first, second, app_id, key, _ = pair
    status, headers, _ = api(second, key, "GET", "/api/v1/feed")
    assert status == 200
    etag = headers["etag"]
    campaign = {"app": app_id, "name": "Spring", "triggers": [{"event": "app_launch"}],
                "message": {"layout": "banner", "title": {"text": "Spring sale"}, "body": {"text": "Today"}}}
    status, _, body = api(first, key, "POST", "/api/v1/campaigns", campaign)
    assert status == 201, body
    identifier = json.loads(body)["id"]
    status, _, body = api(first, key, "POST", f"/api/v1/campaigns/{identifier}/publish", {})
    published = time.monotonic()
    assert status == 200, body
    while True:
        status, headers, body = api(second, key, "GET", "/api/v1/feed", headers={"If-None-Match": etag})
        if status == 200:
            break
        assert status == 304
        assert time.monotonic() - published < 1.0, "the second instance's feed did not change within a second"
        time.sleep(0.02)
    assert [c["message"]["title"]["text"] for c in json.loads(body)["campaigns"]] == ["Spring sale"]


def test_a_batch_sent_to_both_instances_counts_once(pair):
    first, second, app_id, key, _ = pair
    campaign = {"app": app_id, "name": "Counted", "triggers": [{"event": "app_launch"}],
                "message": {"layout": "banner", "title": {"text": "Counted"}, "body": {"text": "Once"}}}
    status, _, body = api(first, key, "POST", "/api/v1/campaigns", campaign)
    identifier = json.loads(body)["id"]
    assert api(first, key, "POST", f"/api/v1/campaigns/{identifier}/publish", {})[0] == 200
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    events = [{"id": str(uuid.uuid4()), "type": "impression", "campaignId": identifier, "occurredAt": now, "platform": "ios",
               "installationId": f"iid-{index}"} for index in range(20)]
    status, _, body = api(first, key, "POST", "/api/v1/events", {"events": events})
    assert status == 200 and json.loads(body)["accepted"] == 20
    status, _, body = api(second, key, "POST", "/api/v1/events", {"events": events})
    assert status == 200, body
    for server in (first, second):
        status, _, body = api(server, key, "GET", f"/api/v1/campaigns/{identifier}/stats")
        assert status == 200
        assert json.loads(body)["totals"]["impressions"] == 20
        assert json.loads(body)["totals"]["uniqueDevices"] == 20


def test_a_session_made_on_one_instance_works_on_the_other(pair):
    first, second, _, _, (email, password) = pair
    status, headers, body = call(first, "GET", "/login")
    visitor = cookie(headers, "herald_visitor")
    form = urllib.parse.urlencode({"email": email, "password": password, "csrf_token": csrf_token(body)}).encode()
    status, headers, body = call(first, "POST", "/login", {"Cookie": f"herald_visitor={visitor}", "Content-Type": URLENCODED}, form)
    assert status == 303, body
    session = cookie(headers, "herald_session")
    status, _, body = call(second, "GET", "/campaigns", {"Cookie": f"herald_session={session}"})
    assert status == 200, "the second instance did not know the first one's session"
    assert b"Spring" in body

    # Signing out on the second ends the session on the first too.
    status, _, page = call(second, "GET", "/campaigns/new", {"Cookie": f"herald_session={session}"})
    token = csrf_token(page)
    status, _, _ = call(second, "POST", "/logout", {"Cookie": f"herald_session={session}", "Content-Type": URLENCODED},
                        urllib.parse.urlencode({"csrf_token": token}).encode())
    assert status == 303
    status, headers, _ = call(first, "GET", "/campaigns", {"Cookie": f"herald_session={session}"})
    assert status == 303 and dict((n.lower(), v) for n, v in headers)["location"].startswith("/login")
