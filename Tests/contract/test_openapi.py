"""The API answers as openapi.yaml says: the document is a valid OpenAPI 3.1 description, and real
responses of a running Herald, for every endpoint and the errors it documents, match the schema
declared for their path, method and status."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate as validate_spec
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

REPO_ROOT = Path(__file__).resolve().parents[2]
SPEC = yaml.safe_load((REPO_ROOT / "openapi.yaml").read_text())
SPEC_URI = "urn:herald:openapi"
REGISTRY = Registry().with_resource(SPEC_URI, Resource.from_contents(SPEC, default_specification=DRAFT202012))
SHOP_ORIGIN = "https://shop.example.com"
# The web client's source lands with the client itself; until then this Herald serves no script.
WEB_CLIENT_SOURCE = REPO_ROOT / "Clients" / "web" / "herald.js"


@dataclass
class Answer:
    status: int
    headers: dict
    body: bytes

    def json(self):
        return json.loads(self.body)


@dataclass
class Api:
    base_url: str
    keys: dict  # name -> secret
    app_id: int
    checked: set
    pid: int  # the server's process
    server: object  # the HeraldServer

    def call(self, method: str, path: str, key: str | None = "rw", body=None, headers=None, raw: bytes | None = None) -> Answer:
        request_headers = dict(headers or {})
        if key:
            request_headers["Authorization"] = f"Bearer {self.keys.get(key, key)}"
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            request_headers.setdefault("Content-Type", "application/json")
        request = urllib.request.Request(self.base_url + path, data=data, method=method, headers=request_headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                answer = Answer(response.status, dict(response.headers), response.read())
        except urllib.error.HTTPError as error:
            answer = Answer(error.code, dict(error.headers), error.read())
        self.conforms(method, path, answer)
        return answer

    def oversized(self, path: str, size: int) -> Answer:
        """Declares a body over the limit and reads the answer Herald gives before any of it is sent."""
        url = urllib.parse.urlsplit(self.base_url)
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        connection.putrequest("POST", path)
        connection.putheader("Authorization", f"Bearer {self.keys['rw']}")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(size))
        connection.endheaders()
        response = connection.getresponse()
        answer = Answer(response.status, dict(response.getheaders()), response.read())
        connection.close()
        self.conforms("POST", path, answer)
        return answer

    def conforms(self, method: str, path: str, answer: Answer) -> None:
        """Fails unless the answer's status is documented for this operation and its body matches."""
        template, operation = find_operation(method, path)
        responses = operation["responses"]
        assert str(answer.status) in responses, f"{method} {template} answered {answer.status}, which openapi.yaml does not document"
        response = resolve(responses[str(answer.status)])
        self.checked.add((method, template, answer.status))
        for name, header in (response.get("headers") or {}).items():
            if resolve(header).get("required") is False:
                continue  # documented as sometimes present (the CORS headers of a preflight)
            assert name.lower() in {h.lower() for h in answer.headers}, f"{method} {template} {answer.status} lacks header {name}"
        content = response.get("content")
        if not content:
            assert answer.body == b"", f"{method} {template} {answer.status} should have no body"
            return
        media = answer.headers.get("Content-Type", "").split(";")[0]
        assert media in content, f"{method} {template} {answer.status} is {media}, documented: {list(content)}"
        if media == "application/json":
            schema = content[media]["schema"]
            Draft202012Validator(rebase(schema), registry=REGISTRY).validate(json.loads(answer.body))


def rebase(schema):
    """Points local references at the stored spec, so the validator can follow them."""
    text = json.dumps(schema).replace('"#/', f'"{SPEC_URI}#/')
    return json.loads(text)


def resolve(node):
    while "$ref" in node:
        target = SPEC
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def find_operation(method: str, path: str):
    path = path.split("?")[0]
    for template, item in SPEC["paths"].items():
        pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
        if re.match(pattern, path):
            item = resolve(item)
            operation = item.get(method.lower())
            assert operation, f"openapi.yaml has no {method} for {template}"
            return template, operation
    raise AssertionError(f"openapi.yaml has no path for {path}")


@pytest.fixture(scope="module")
def api(tmp_path_factory, herald_cli, herald_serve):
    workdir = tmp_path_factory.mktemp("herald-api")
    database = workdir / "herald.sqlite"
    app_id = int(herald_cli("app", "create", "--name", "Shop", "--platform", "ios", database=database, cwd=workdir).split()[-1])
    keys = {}
    for name, scopes in {"rw": ["campaigns:read", "campaigns:write"], "feed": ["feed:read"], "events": ["events:write"],
                         "privacy": ["installations:delete"]}.items():
        arguments = ["key", "create", "--app", str(app_id), "--name", name]
        for scope in scopes:
            arguments += ["--scope", scope]
        keys[name] = herald_cli(*arguments, database=database, cwd=workdir).split()[-1]
    herald_cli("device", "add", "--app", str(app_id), "--installation", "iid-test", "--name", "QA", database=database, cwd=workdir)
    herald_cli("app", "origin", "add", "--app", str(app_id), SHOP_ORIGIN, database=database, cwd=workdir)
    with herald_serve(workdir, database) as server:
        yield Api(base_url=server.base_url, keys=keys, app_id=app_id, checked=set(), pid=server.pid, server=server)


def card(app_id: int, title: str = "Spring sale", **extra) -> dict:
    campaign = {
        "app": app_id, "name": title, "priority": 2,
        "triggers": [{"event": "purchase", "filters": [{"property": "product_id", "op": "eq", "value": "sku_1"}]}],
        "message": {"layout": "card", "title": {"text": title, "color": "#1A73E8"}, "imageUrl": "https://example.com/p.png",
                    "backgroundColor": "#FFFFFF", "primaryAction": {"text": "Shop", "url": "https://example.com/shop"},
                    "translations": {"fa": {"title": {"text": "حراج بهاره"}, "primaryAction": {"text": "خرید"}},
                                     "pt-BR": {"imageUrl": "https://example.com/br.png"}}},
        "data": [{"key": "promo", "value": "SPRING"}],
    }
    campaign.update(extra)
    return campaign


def test_the_document_is_valid_openapi():
    validate_spec(SPEC)


def test_every_endpoint_answers_as_documented(api: Api):
    assert api.call("GET", "/api/v1/key").status == 200
    assert api.call("GET", "/api/v1/key", key=None).status == 401

    created = api.call("POST", "/api/v1/campaigns", body=card(api.app_id))
    assert created.status == 201
    campaign_id = created.json()["id"]
    test_only = api.call("POST", "/api/v1/campaigns", body=card(api.app_id, "Trial", testOnDevice=True)).json()["id"]

    assert api.call("GET", "/api/v1/campaigns?pageSize=1").status == 200
    assert api.call("GET", "/api/v1/campaigns?page=0").status == 400
    assert api.call("GET", "/api/v1/campaigns", key="feed").status == 403
    assert api.call("GET", f"/api/v1/campaigns/{campaign_id}").status == 200
    assert api.call("GET", "/api/v1/campaigns/999999").status == 404

    replaced = api.call("PUT", f"/api/v1/campaigns/{campaign_id}", body=card(api.app_id, "Second"), headers={"If-Match": '"r1"'})
    assert replaced.status == 200
    assert api.call("PUT", f"/api/v1/campaigns/{campaign_id}", body=card(api.app_id, "Stale"), headers={"If-Match": '"r1"'}).status == 412

    invalid = api.call("POST", "/api/v1/campaigns", body={"app": api.app_id, "name": "Bad", "message": {"layout": "card", "imageUrl": "http://x", "title": {"text": "Hi", "color": "red"}}})
    assert invalid.status == 422
    assert {"message.imageUrl", "message.title.color"} <= {field["path"] for field in invalid.json()["error"]["fields"]}
    assert api.call("POST", "/api/v1/campaigns", raw=b'{"app": 1,', headers={"Content-Type": "application/json"}).status == 400
    assert api.call("POST", "/api/v1/campaigns", raw=b"{}", headers={"Content-Type": "text/plain"}).status == 415
    assert api.oversized("/api/v1/campaigns", 2 * 1024 * 1024).status == 413

    assert api.call("POST", f"/api/v1/campaigns/{campaign_id}/publish").status == 200
    assert api.call("POST", f"/api/v1/campaigns/{campaign_id}/publish").status == 409
    for action in ("pause", "resume"):
        assert api.call("POST", f"/api/v1/campaigns/{campaign_id}/{action}").status == 200
    assert api.call("DELETE", f"/api/v1/campaigns/{campaign_id}").status == 409

    feed = api.call("GET", "/api/v1/feed", key="feed")
    assert feed.status == 200
    assert [c["message"]["title"]["text"] for c in feed.json()["campaigns"]] == ["Second"]
    assert [c["id"] for c in feed.json()["campaigns"]] == [campaign_id]
    assert not {"name", "description", "status"} & set(feed.json()["campaigns"][0]), "the feed carries no marketers' words"
    assert feed.json()["campaigns"][0]["message"]["translations"] == card(api.app_id)["message"]["translations"]
    assert api.call("GET", "/api/v1/feed", key="feed", headers={"If-None-Match": feed.headers["ETag"]}).status == 304
    tester = api.call("GET", "/api/v1/feed", key="feed", headers={"X-Installation-Id": "iid-test"})
    assert [c.get("test") for c in tester.json()["campaigns"]] == [True, None] or [c.get("test") for c in tester.json()["campaigns"]] == [None, True]
    assert api.call("GET", "/api/v1/feed", key="events").status == 403
    assert api.call("GET", "/api/v1/feed", key="hrld_unknown").status == 401

    now = __import__("datetime").datetime.now(__import__("datetime").timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    events = [{"id": str(__import__("uuid").uuid4()), "type": "impression", "campaignId": campaign_id, "occurredAt": now,
               "platform": "ios", "installationId": "iid-1", "language": "fa"},
              {"id": str(__import__("uuid").uuid4()), "type": "click", "campaignId": campaign_id, "occurredAt": now,
               "platform": "ios", "action": "primary", "url": "https://example.com"},
              {"id": "not-a-uuid", "type": "impression", "campaignId": campaign_id, "occurredAt": now, "platform": "ios"}]
    ingested = api.call("POST", "/api/v1/events", key="events", body={"events": events})
    assert ingested.status == 200
    assert ingested.json()["accepted"] == 2 and [r["index"] for r in ingested.json()["rejected"]] == [2]
    assert api.call("POST", "/api/v1/events", key="events", body={"events": events[:1] * 1001}).status == 422
    assert api.call("POST", "/api/v1/events", key="feed", body={"events": []}).status == 403
    stats = api.call("GET", f"/api/v1/campaigns/{campaign_id}/stats")
    assert stats.status == 200 and stats.json()["totals"]["impressions"] == 1
    assert [(row.get("language"), row["impressions"]) for row in stats.json()["byLanguage"]] == [("fa", 1), (None, 0)]
    assert api.call("GET", f"/api/v1/campaigns/{campaign_id}/stats?from=2026-02-30").status == 400
    registration = {"platform": "ios", "pushProvider": "apns", "pushToken": "AB" * 32, "appVersion": "2.4.0", "language": "pt-br",
                    "country": "br", "timeZone": "America/Sao_Paulo", "notificationsAllowed": True}
    registered = api.call("PUT", "/api/v1/installations/iid-1", key="events", body=registration)
    assert registered.status == 201
    assert {key: registered.json()[key] for key in ("pushToken", "language", "country")} == {"pushToken": "ab" * 32, "language": "pt-BR", "country": "BR"}
    reached = api.call("POST", "/api/v1/audience", body={"app": api.app_id, "targeting": {"languages": ["pt"], "countries": ["BR"]}})
    assert reached.status == 200 and reached.json() == {"installations": 1, "withPushToken": 1, "estimated": False, "notApplied": []}
    missed = api.call("POST", "/api/v1/audience", body={"app": api.app_id, "targeting": {"platforms": ["android"], "percentage": 50}})
    assert missed.json() == {"installations": 0, "withPushToken": 0, "estimated": True, "notApplied": []}
    refused = api.call("POST", "/api/v1/audience", body={"app": api.app_id, "targeting": {"percentage": 0}})
    assert refused.status == 422 and [field["path"] for field in refused.json()["error"]["fields"]] == ["targeting.percentage"]
    assert api.call("POST", "/api/v1/audience", raw=b'{"app": ', headers={"Content-Type": "application/json"}).status == 400
    assert api.call("POST", "/api/v1/audience", raw=b"{}", headers={"Content-Type": "text/plain"}).status == 415
    assert api.call("POST", "/api/v1/audience", key="events", body={"app": api.app_id, "targeting": {}}).status == 403
    assert api.call("PUT", "/api/v1/installations/iid-1", key="events", body={"platform": "ios", "notificationsAllowed": False}).status == 200
    unknown = api.call("PUT", "/api/v1/installations/iid-1", key="events", body={**registration, "pushTokn": "ab"})
    assert unknown.status == 422 and [field["path"] for field in unknown.json()["error"]["fields"]] == ["pushTokn"]
    assert api.call("PUT", "/api/v1/installations/iid-1", key="events", body={"platform": "ios", "notificationsAllowed": True, "pushToken": "ab"}).status == 422
    assert api.call("PUT", "/api/v1/installations/iid-1", key="events", raw=b'{"platform": ', headers={"Content-Type": "application/json"}).status == 400
    assert api.call("PUT", "/api/v1/installations/iid-1", key="events", raw=b"{}", headers={"Content-Type": "text/plain"}).status == 415
    assert api.call("PUT", "/api/v1/installations/iid-1", key="feed", body=registration).status == 403
    erased = api.call("DELETE", "/api/v1/installations/iid-1", key="privacy").json()
    assert erased["erasedEvents"] == 1 and erased["erasedRegistration"] is True
    assert api.call("DELETE", "/api/v1/installations/iid-1", key="events").status == 403

    # Browsers: a preflight for an allowed origin, a refused one, the feed and events from pages, a beacon
    preflight = api.call("OPTIONS", "/api/v1/feed", key=None,
                         headers={"Origin": SHOP_ORIGIN, "Access-Control-Request-Method": "GET"})
    assert preflight.status == 204 and preflight.headers["Access-Control-Allow-Origin"] == SHOP_ORIGIN
    assert api.call("OPTIONS", "/api/v1/events", key=None, headers={"Origin": SHOP_ORIGIN}).headers["Access-Control-Allow-Methods"] == "POST"
    refused = api.call("OPTIONS", "/api/v1/feed", key=None, headers={"Origin": "https://elsewhere.example"})
    assert refused.status == 403 and "Access-Control-Allow-Origin" not in refused.headers
    from_page = api.call("GET", "/api/v1/feed", key="feed", headers={"Origin": SHOP_ORIGIN})
    assert from_page.status == 200 and from_page.headers["Access-Control-Allow-Origin"] == SHOP_ORIGIN
    assert api.call("GET", "/api/v1/feed", key="feed", headers={"Origin": "https://elsewhere.example"}).status == 403
    beacon = {"events": [{"id": str(uuid.uuid4()), "type": "impression", "campaignId": campaign_id, "occurredAt": now, "platform": "web"}]}
    sent = api.call("POST", f"/api/v1/events?key={api.keys['events']}", key=None, raw=json.dumps(beacon).encode(),
                    headers={"Content-Type": "text/plain;charset=UTF-8", "Origin": SHOP_ORIGIN})
    assert sent.status == 200 and sent.json()["accepted"] == 1
    assert api.call("POST", "/api/v1/events", key="events", body=beacon, headers={"Origin": "https://elsewhere.example"}).status == 403

    # The web client (once its source is in the repository) and its demo page
    for path in ("/sdk/v1/herald.js", "/sdk/v1/herald.mjs"):
        script = api.call("GET", path, key=None)
        assert script.status == (200 if WEB_CLIENT_SOURCE.exists() else 404)
        if script.status == 200:
            assert api.call("GET", path, key=None, headers={"If-None-Match": script.headers["ETag"]}).status == 304
    assert api.call("GET", "/sdk/v1/demo", key=None).status == 200

    # A test of the running campaign to the test device (named twice, counted once), read back; refusals
    tests = f"/api/v1/campaigns/{campaign_id}/test-sends"
    tested = api.call("POST", tests, body={"installationIds": ["iid-test", "iid-test"]})
    assert tested.status == 201 and [device["status"] for device in tested.json()["devices"]] == ["in_feed"]
    assert api.call("GET", tested.headers["Location"]).status == 200
    assert api.call("GET", f"{tests}/999999").status == 404
    assert [c.get("test") for c in api.call("GET", "/api/v1/feed", key="feed", headers={"X-Installation-Id": "iid-test"}).json()["campaigns"]] == [True, True]
    assert api.call("POST", tests, body={"installationIds": ["iid-nobody"]}).json()["error"]["fields"][0]["path"] == "installationIds.0"
    assert api.call("POST", tests, raw=b'{"installationIds": ', headers={"Content-Type": "application/json"}).status == 400
    assert api.call("POST", tests, raw=b"{}", headers={"Content-Type": "text/plain"}).status == 415
    assert api.call("POST", tests, body={"installationIds": ["iid-test"]}, key="feed").status == 403
    assert api.call("POST", "/api/v1/campaigns/999999/test-sends", body={"installationIds": ["iid-test"]}).status == 404
    assert api.oversized(tests, 2 * 1024 * 1024).status == 413

    for action in ("stop", "archive"):
        assert api.call("POST", f"/api/v1/campaigns/{campaign_id}/{action}").status == 200
    assert api.call("POST", tests, body={"installationIds": ["iid-test"]}).status == 409
    assert api.call("DELETE", f"/api/v1/campaigns/{test_only}").status == 204

    documented = {(method.upper(), template) for template, item in SPEC["paths"].items() for method in resolve(item) if method in ("get", "post", "put", "delete", "options")}
    exercised = {(method, template) for method, template, _ in api.checked}
    assert documented <= exercised, f"not exercised: {sorted(documented - exercised)}"


def test_a_change_the_database_cannot_take_is_a_documented_503(api: Api, refusing_writes):
    # Given a campaign, then a database that takes no more changes (a full disk, a read-only server)
    created = api.call("POST", "/api/v1/campaigns", body=card(api.app_id, "Before the disk filled"))
    assert created.status == 201
    with refusing_writes(api.server):
        # When apps and scripts send changes, then each is a 503 as documented, with Retry-After
        event = {"id": str(uuid.uuid4()), "type": "impression", "campaignId": created.json()["id"],
                 "occurredAt": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "platform": "ios"}
        for answer in (api.call("POST", "/api/v1/events", key="events", body={"events": [event]}),
                       api.call("PUT", f"/api/v1/campaigns/{created.json()['id']}", body=card(api.app_id, "Never saved")),
                       api.call("POST", "/api/v1/campaigns", body=card(api.app_id, "Never created")),
                       api.call("PUT", "/api/v1/installations/iid-disk-full", key="events", body={"platform": "ios", "notificationsAllowed": True})):
            assert answer.status == 503
            assert answer.json()["error"]["code"] == "unavailable"
            assert int(answer.headers["Retry-After"]) > 0
        # And reads answer as usual
        assert api.call("GET", f"/api/v1/campaigns/{created.json()['id']}").json()["name"] == "Before the disk filled"
    assert api.call("POST", "/api/v1/events", key="events", body={"events": [event]}).status == 200
