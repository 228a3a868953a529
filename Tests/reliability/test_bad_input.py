"""Bad input against the real server: invalid UTF-8 in forms and JSON, truncated multipart bodies,
huge headers and request lines, 10,000 custom data rows, deeply nested JSON and clients that send one
byte a second. Every case is answered with a 4xx that says what is wrong, or the connection is
dropped cleanly; after each one the server still serves other clients on other connections.

The HTTP adapter's own limits (a declared body over 1 MiB, a chunked body over it, a silent
connection) are covered in Swift by Tests/HeraldTests/MicroHTTPD/AdapterTests.swift; here they are reached
end to end through `herald serve`, with the features behind them.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CONNECTION_TIMEOUT = 2  # seconds, passed to `herald serve --connection-timeout`
# How long a test waits for an answer before it calls the server hung. Generous: it is a guard, not a measure.
PATIENCE = 60
BOUNDARY = "----herald-bad-input"


# MARK: - Talking HTTP, politely and not


@dataclass
class Reply:
    """What came back on a connection: a status, or None when the server closed it without answering."""

    status: int | None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self):
        return json.loads(self.body)


def read_reply(sock: socket.socket) -> Reply:
    """Reads one HTTP response (Content-Length framed, as Herald and libmicrohttpd send them)."""
    received = b""
    try:
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    except ConnectionResetError:
        pass
    if b"\r\n\r\n" not in received:
        assert received == b"", f"the server sent a partial answer and closed: {received[:200]!r}"
        return Reply(status=None)
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        key = name.strip().lower()
        # A repeated header (Set-Cookie at sign-in) is kept whole, joined as HTTP joins lists.
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    length = int(headers.get("content-length", "0"))
    try:
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    except ConnectionResetError:
        pass
    assert len(body) >= length, f"the server closed in the middle of a {status} answer"
    return Reply(status=status, headers=headers, body=body[:length])


def exchange(address: tuple[str, int], data: bytes, *, close_write: bool = False) -> Reply:
    """Sends raw bytes on a new connection (then, with `close_write`, ends the sending side) and reads the answer."""
    with socket.create_connection(address, timeout=PATIENCE) as sock:
        try:
            sock.sendall(data)
            if close_write:
                sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server stopped reading early; it may still have answered
        return read_reply(sock)


def request_bytes(method: str, target: str, headers: dict[str, str], body: bytes = b"", *, length: int | None = None) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", "Host: localhost", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines.append(f"Content-Length: {len(body) if length is None else length}")
    return "\r\n".join(lines).encode() + b"\r\n\r\n" + body


def multipart(fields: list[tuple[str, bytes]], files: list[tuple[str, str, bytes]] = ()) -> bytes:
    """A multipart/form-data body with BOUNDARY: plain fields, then (name, filename, content) files."""
    body = b""
    for name, value in fields:
        body += f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode() + value + b"\r\n"
    for name, filename, content in files:
        body += (f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                 "Content-Type: application/json\r\n\r\n").encode() + content + b"\r\n"
    return body + f"--{BOUNDARY}--\r\n".encode()


MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"
URLENCODED = "application/x-www-form-urlencoded"


@dataclass
class Herald:
    address: tuple[str, int]
    app_id: int
    key: str  # every scope
    email: str
    password: str
    session: str = ""
    csrf: str = ""

    def send(self, method: str, target: str, body: bytes = b"", headers: dict[str, str] | None = None, **options) -> Reply:
        return exchange(self.address, request_bytes(method, target, headers or {}, body), **options)

    def api(self, method: str, target: str, body: bytes = b"", content_type: str = "application/json") -> Reply:
        headers = {"Authorization": f"Bearer {self.key}"}
        if body:
            headers["Content-Type"] = content_type
        return self.send(method, target, body, headers)

    def browser(self, method: str, target: str, body: bytes = b"", content_type: str = URLENCODED, **options) -> Reply:
        """A request of the signed-in browser session (cookie; the caller puts the CSRF token in the form)."""
        headers = {"Cookie": f"herald_session={self.session}"}
        if method != "GET":
            headers["Content-Type"] = content_type
        return self.send(method, target, body, headers, **options)

    def campaign_count(self) -> int:
        reply = self.api("GET", "/api/v1/campaigns?pageSize=1")
        assert reply.status == 200, reply.text
        return reply.json()["total"]


def cookie(reply: Reply, name: str) -> str | None:
    match = re.search(rf"{name}=([^;]+)", reply.headers.get("set-cookie", ""))
    return match.group(1) if match else None


def csrf_token(reply: Reply) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', reply.text)
    assert match, f"no CSRF token in the page ({reply.status})"
    return match.group(1)


def sign_in(herald: Herald) -> None:
    login = herald.send("GET", "/login")
    visitor = cookie(login, "herald_visitor")
    form = f"email={herald.email}&password={herald.password}&csrf_token={csrf_token(login)}".encode()
    signed_in = herald.send("POST", "/login", form, {"Cookie": f"herald_visitor={visitor}", "Content-Type": URLENCODED})
    assert signed_in.status == 303, signed_in.text
    herald.session = cookie(signed_in, "herald_session")
    composer = herald.browser("GET", "/campaigns/new")
    assert composer.status == 200
    herald.csrf = csrf_token(composer)


@pytest.fixture(scope="module")
def herald(tmp_path_factory, herald_cli, herald_serve):
    workdir = tmp_path_factory.mktemp("herald-bad-input")
    database = workdir / "herald.sqlite"
    email, password = "editor@example.com", "bad-input-passphrase"
    herald_cli("user", "create", "--email", email, "--role", "admin", "--password-stdin",
               database=database, cwd=workdir, stdin=password + "\n")
    app_id = int(herald_cli("app", "create", "--name", "Shop", "--platform", "ios", database=database, cwd=workdir).split()[-1])
    arguments = ["key", "create", "--app", str(app_id), "--name", "all"]
    for scope in ("campaigns:read", "campaigns:write", "events:write", "feed:read"):
        arguments += ["--scope", scope]
    key = herald_cli(*arguments, database=database, cwd=workdir).split()[-1]
    with herald_serve(workdir, database, "--connection-timeout", str(CONNECTION_TIMEOUT)) as server:
        host, port = server.base_url.removeprefix("http://").rsplit(":", 1)
        instance = Herald(address=(host, int(port)), app_id=app_id, key=key, email=email, password=password)
        sign_in(instance)
        yield instance
        log = Path(server.log_path).read_text()
        assert " failed: " not in log, f"a request failed inside the server:\n{log}"


def assert_still_serving(herald: Herald) -> None:
    """Other clients, on new connections, still get answers: the health check and a real API call."""
    health = herald.send("GET", "/healthz")
    assert health.status == 200, f"/healthz answered {health.status}"
    listed = herald.api("GET", "/api/v1/campaigns?pageSize=1")
    assert listed.status == 200, f"the API answered {listed.status}: {listed.text}"
    assert "campaigns" in listed.json()


def assert_refused(reply: Reply, *, statuses: set[int], says: str | None = None) -> None:
    """A 4xx among `statuses` with a message (containing `says`), or a connection closed without an answer."""
    if reply.status is None:
        return
    assert reply.status in statuses, f"answered {reply.status}: {reply.text[:500]}"
    assert reply.body.strip(), f"the {reply.status} says nothing"
    if says:
        assert says in reply.text, f"the {reply.status} does not say {says!r}: {reply.text[:500]}"


def card(app_id: int, name: str = "Spring sale", **extra) -> dict:
    campaign = {
        "app": app_id, "name": name,
        "message": {"layout": "card", "title": {"text": name}, "imageUrl": "https://example.com/p.png",
                    "backgroundColor": "#FFFFFF", "primaryAction": {"text": "Shop", "url": "https://example.com/shop"}},
    }
    campaign.update(extra)
    return campaign


def created_campaign(herald: Herald, **extra) -> int:
    reply = herald.api("POST", "/api/v1/campaigns", json.dumps(card(herald.app_id, **extra)).encode())
    assert reply.status == 201, reply.text
    return reply.json()["id"]


def event(campaign_id: int, **extra) -> dict:
    return {"id": str(uuid.uuid4()), "type": "impression", "campaignId": campaign_id,
            "occurredAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "platform": "ios", **extra}


# MARK: - Invalid UTF-8


INVALID_UTF8 = [b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"caf\xe9"]  # stray bytes, a broken pair, a surrogate, Latin-1


@pytest.mark.parametrize("bad", INVALID_UTF8, ids=["ff-fe", "broken-pair", "surrogate", "latin-1"])
def test_invalid_utf8_in_the_login_form_is_a_400(herald: Herald, bad: bytes):
    login = herald.send("GET", "/login")
    visitor = {"Cookie": f"herald_visitor={cookie(login, 'herald_visitor')}"}
    token = csrf_token(login).encode()
    escaped = "".join(f"%{byte:02X}" for byte in bad).encode()

    for body, content_type in [
        (b"email=" + escaped + b"&password=x&csrf_token=" + token, URLENCODED),
        (b"email=" + bad + b"&password=x&csrf_token=" + token, URLENCODED),
        (multipart([("email", bad), ("password", b"x"), ("csrf_token", token)]), MULTIPART),
    ]:
        reply = herald.send("POST", "/login", body, {**visitor, "Content-Type": content_type})
        assert reply.status == 400, reply.text[:500]
        assert "not valid UTF-8" in reply.text
        assert_still_serving(herald)


@pytest.mark.parametrize("bad", INVALID_UTF8, ids=["ff-fe", "broken-pair", "surrogate", "latin-1"])
def test_invalid_utf8_in_the_composer_is_a_400_and_saves_nothing(herald: Herald, bad: bytes):
    before = herald.campaign_count()
    escaped = "".join(f"%{byte:02X}" for byte in bad).encode()
    fields = [("csrf_token", herald.csrf.encode()), ("app", str(herald.app_id).encode()), ("intent", b"draft"),
              ("message.layout", b"modal"), ("message.title.text", b"Hi")]
    urlencoded = b"&".join(name.encode() + b"=" + value for name, value in fields)

    for body, content_type in [
        (urlencoded + b"&name=Sale+" + escaped, URLENCODED),
        (urlencoded + b"&data.0.key=promo&data.0.value=" + bad, URLENCODED),
        (multipart(fields + [("name", b"Sale " + bad)]), MULTIPART),
    ]:
        reply = herald.browser("POST", "/campaigns", body, content_type)
        assert reply.status == 400, reply.text[:500]
        assert "not valid UTF-8" in reply.text
        assert_still_serving(herald)
    assert herald.campaign_count() == before


@pytest.mark.parametrize("bad", INVALID_UTF8, ids=["ff-fe", "broken-pair", "surrogate", "latin-1"])
def test_invalid_utf8_in_json_bodies_is_a_400(herald: Herald, bad: bytes):
    before = herald.campaign_count()
    existing = created_campaign(herald, name="Target of a bad replace")
    campaign = json.dumps(card(herald.app_id, name="NAME")).encode().replace(b"NAME", b"Sale " + bad)
    events = json.dumps({"events": [event(existing, installationId="IID")]}).encode().replace(b"IID", bad)
    registration = json.dumps({"platform": "ios", "appVersion": "VERSION", "notificationsAllowed": True}).encode().replace(b"VERSION", bad)

    for method, target, body in [
        ("POST", "/api/v1/campaigns", campaign),
        ("PUT", f"/api/v1/campaigns/{existing}", campaign),
        ("POST", "/api/v1/events", events),
        ("PUT", "/api/v1/installations/iid-bad-utf8", registration),
    ]:
        reply = herald.api(method, target, body)
        assert reply.status == 400, f"{method} {target}: {reply.status} {reply.text[:500]}"
        assert reply.json()["error"]["code"] == "bad_request"
        assert "The JSON is not valid UTF-8 at byte" in reply.json()["error"]["message"], reply.text
        assert_still_serving(herald)
    assert herald.campaign_count() == before + 1
    assert herald.api("GET", f"/api/v1/campaigns/{existing}").json()["name"] == "Target of a bad replace"


@pytest.mark.parametrize("bad", INVALID_UTF8, ids=["ff-fe", "broken-pair", "surrogate", "latin-1"])
def test_an_import_file_with_invalid_utf8_is_refused_with_the_reason(herald: Herald, bad: bytes):
    before = herald.campaign_count()
    file = json.dumps([card(herald.app_id, name="NAME")]).encode().replace(b"NAME", b"Sale " + bad)
    body = multipart([("csrf_token", herald.csrf.encode()), ("app", str(herald.app_id).encode())],
                     [("file", "campaigns.json", file)])
    reply = herald.browser("POST", "/campaigns/import", body, MULTIPART)
    assert reply.status == 422, reply.text[:500]
    assert "Nothing was imported" in reply.text
    assert "The JSON is not valid UTF-8 at byte" in reply.text, "the reason, with where it broke"
    assert herald.campaign_count() == before
    assert_still_serving(herald)


def test_invalid_utf8_in_the_address_and_headers_is_refused(herald: Herald):
    path = herald.send("GET", "/campaigns/%FF%FE")
    assert path.status == 400 and "not valid UTF-8" in path.text
    query = herald.api("GET", "/api/v1/campaigns?q=%FF%FE")
    assert query.status in {200, 400}, query.text  # an undecodable query reads as no filter, or is refused
    raw = exchange(herald.address, b"GET /campaigns/\xff\xfe HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
    assert_refused(raw, statuses={400})
    key = exchange(herald.address, b"GET /api/v1/key HTTP/1.1\r\nHost: h\r\nConnection: close\r\nAuthorization: Bearer \xff\xfe\r\n\r\n")
    assert_refused(key, statuses={400, 401})
    assert_still_serving(herald)


# MARK: - Truncated multipart


def truncations(body: bytes) -> dict[str, bytes]:
    closing = f"--{BOUNDARY}--\r\n".encode()
    assert body.endswith(closing)
    last_part = body.rfind(b"\r\n\r\n")  # inside the last part: after its headers
    return {
        "cut-mid-part": body[: last_part + 6],
        "no-final-boundary": body[: -len(closing)],
        "cut-in-headers": body[: body.find(b"Content-Disposition") + 10],
        "no-boundary-at-all": b"just some bytes\r\n",
    }


def test_truncated_multipart_forms_are_a_400(herald: Herald):
    before = herald.campaign_count()
    login = herald.send("GET", "/login")
    visitor = {"Cookie": f"herald_visitor={cookie(login, 'herald_visitor')}", "Content-Type": MULTIPART}
    forms = {
        ("/login", "visitor"): multipart([("email", herald.email.encode()), ("password", b"wrong"),
                                          ("csrf_token", csrf_token(login).encode())]),
        ("/campaigns", "editor"): multipart([("csrf_token", herald.csrf.encode()), ("app", str(herald.app_id).encode()),
                                             ("name", b"Cut short"), ("message.layout", b"modal"),
                                             ("message.title.text", b"Hi")]),
        ("/campaigns/import", "editor"): multipart([("csrf_token", herald.csrf.encode()), ("app", str(herald.app_id).encode())],
                                                   [("file", "c.json", json.dumps([card(herald.app_id)]).encode())]),
    }
    for (target, who), body in forms.items():
        for case, truncated in truncations(body).items():
            if who == "visitor":
                reply = herald.send("POST", target, truncated, visitor)
            else:
                reply = herald.browser("POST", target, truncated, MULTIPART)
            assert reply.status == 400, f"{target} {case}: {reply.status} {reply.text[:500]}"
            assert "The form upload is malformed" in reply.text, f"{target} {case}: {reply.text[:500]}"
            assert_still_serving(herald)
    assert herald.campaign_count() == before


def test_a_body_shorter_than_its_content_length_is_dropped_cleanly(herald: Herald):
    before = herald.campaign_count()
    body = multipart([("csrf_token", herald.csrf.encode()), ("app", str(herald.app_id).encode()),
                      ("name", b"Never whole"), ("message.layout", b"modal"), ("message.title.text", b"Hi")])
    headers = {"Cookie": f"herald_session={herald.session}", "Content-Type": MULTIPART}
    api = {"Authorization": f"Bearer {herald.key}", "Content-Type": "application/json"}
    campaign = json.dumps(card(herald.app_id, name="Never whole")).encode()
    for target, sent_headers, whole in [("/campaigns", headers, body), ("/api/v1/campaigns", api, campaign)]:
        for sent in (0, len(whole) // 2, len(whole) - 1):
            data = request_bytes("POST", target, sent_headers, whole[:sent], length=len(whole) + 100)
            reply = exchange(herald.address, data, close_write=True)
            assert reply.status is None, f"{target} with {sent} of {len(whole) + 100} bytes answered {reply.status}: {reply.text[:300]}"
            assert_still_serving(herald)
    assert herald.campaign_count() == before


# MARK: - Huge headers and request lines


def test_a_100_kb_header_is_refused(herald: Herald):
    for name in ("X-Padding", "Cookie", "Authorization"):
        value = "a" * 100 * 1024
        reply = exchange(herald.address, f"GET /api/v1/key HTTP/1.1\r\nHost: h\r\n{name}: {value}\r\nConnection: close\r\n\r\n".encode())
        assert_refused(reply, statuses={431}, says="too big")
        assert_still_serving(herald)


def test_two_thousand_headers_are_refused(herald: Herald):
    headers = "".join(f"X-Header-{index}: value-{index}\r\n" for index in range(2000))
    reply = exchange(herald.address, f"GET /api/v1/key HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer {herald.key}\r\n{headers}Connection: close\r\n\r\n".encode())
    assert_refused(reply, statuses={431}, says="too big")
    assert_still_serving(herald)


def test_a_huge_request_line_is_refused(herald: Herald):
    for target in ("/api/v1/campaigns?q=" + "a" * 100 * 1024, "/" + "a" * 100 * 1024, "/campaigns/" + "%41" * 40 * 1024):
        reply = exchange(herald.address, f"GET {target} HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer {herald.key}\r\nConnection: close\r\n\r\n".encode())
        assert_refused(reply, statuses={414}, says="too big")
        assert_still_serving(herald)


# MARK: - 10,000 custom data rows


def composer_form(herald: Herald, rows: int) -> bytes:
    data = "&".join(f"data.{index}.key=key{index}&data.{index}.value=value{index}" for index in range(rows))
    return (f"csrf_token={herald.csrf}&app={herald.app_id}&intent=draft&name=Many+rows&message.layout=modal"
            f"&message.title.text=Hi&{data}").encode()


def test_ten_thousand_custom_data_rows_from_the_composer_are_refused_clearly(herald: Herald):
    """20,006 fields: far past any form Herald shows, refused before a composer of 10,000 rows is drawn."""
    before = herald.campaign_count()
    for target in ("/campaigns", "/campaigns/preview"):
        reply = herald.browser("POST", target, composer_form(herald, 10_000))
        assert reply.status == 413, reply.text[:500]
        # The page writes numbers as the reader's language does (2,000 in English)
        assert "This form sent more than the 2,000 fields Herald accepts, so nothing was saved." in reply.text
        assert "A campaign holds at most 50 custom data pairs" in reply.text
        assert_still_serving(herald)
    assert herald.campaign_count() == before


def test_more_custom_data_rows_than_allowed_are_refused_in_the_composer(herald: Herald):
    """Within what a form may send, the composer itself says what is wrong and keeps the input."""
    before = herald.campaign_count()
    reply = herald.browser("POST", "/campaigns", composer_form(herald, 60))
    assert reply.status == 422, reply.text[:500]
    assert "Use at most 50 custom data pairs; this campaign has 60." in reply.text
    assert 'value="key59"' in reply.text
    assert herald.campaign_count() == before
    assert_still_serving(herald)


def test_ten_thousand_custom_data_rows_through_the_api_are_refused_clearly(herald: Herald):
    before = herald.campaign_count()
    campaign = card(herald.app_id, name="Many rows", data=[{"key": f"key{index}", "value": f"value{index}"} for index in range(10_000)])
    reply = herald.api("POST", "/api/v1/campaigns", json.dumps(campaign).encode())
    assert reply.status == 422, reply.text[:500]
    error = reply.json()["error"]
    assert {"path": "data", "message": "Use at most 50 custom data pairs; this campaign has 10000."} in error["fields"]
    assert len(error["fields"]) == 1, "one clear problem, not one per row"
    assert herald.campaign_count() == before
    assert_still_serving(herald)


def test_fifty_custom_data_rows_are_stored_in_order(herald: Herald):
    data = [{"key": f"key{index}", "value": f"value {index} ✓"} for index in range(50)]
    rows = "&".join(f"data.{index}.key={row['key']}&data.{index}.value=value+{index}+%E2%9C%93" for index, row in enumerate(data))
    form = (f"csrf_token={herald.csrf}&app={herald.app_id}&intent=draft&name=Fifty+rows&message.layout=modal"
            f"&message.title.text=Hi&{rows}").encode()
    composed = herald.browser("POST", "/campaigns", form)
    assert composed.status == 303, composed.text[:500]
    composed_id = int(composed.headers["location"].rsplit("/", 1)[-1])
    posted_id = created_campaign(herald, name="Fifty rows by API", data=data)
    for campaign_id in (composed_id, posted_id):
        assert herald.api("GET", f"/api/v1/campaigns/{campaign_id}").json()["data"] == data


# MARK: - Deeply nested JSON


NESTINGS = {
    "arrays": b"[" * 100_000,
    "closed-arrays": b"[" * 100_000 + b"]" * 100_000,
    "objects": b'{"a":' * 100_000,
    "in-a-field": b'{"app": 1, "name": "x", "message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
}


@pytest.mark.parametrize("shape", NESTINGS)
def test_deeply_nested_json_is_a_400(herald: Herald, shape: str):
    before = herald.campaign_count()
    existing = created_campaign(herald, name="Target of a nested replace")
    body = NESTINGS[shape]
    for method, target in [("POST", "/api/v1/campaigns"), ("PUT", f"/api/v1/campaigns/{existing}"), ("POST", "/api/v1/events"),
                           ("PUT", "/api/v1/installations/iid-nested")]:
        reply = herald.api(method, target, body)
        assert reply.status == 400, f"{method} {target}: {reply.status} {reply.text[:300]}"
        assert reply.json()["error"]["code"] == "bad_request"
        message = reply.json()["error"]["message"]
        # The events reader reads as it goes: a body that is not an object fails before any depth is reached.
        refused_shape = target.endswith("/events") and body.lstrip().startswith(b"[") and "the body must be a JSON object" in message
        assert refused_shape or "The JSON nests arrays and objects more than 32 levels deep" in message, message
        assert_still_serving(herald)

    imported = herald.browser("POST", "/campaigns/import", multipart(
        [("csrf_token", herald.csrf.encode()), ("app", str(herald.app_id).encode())], [("file", "deep.json", body)]), MULTIPART)
    assert imported.status == 422, imported.text[:300]
    assert "Nothing was imported" in imported.text
    assert "more than 32 levels deep" in imported.text
    assert_still_serving(herald)
    assert herald.campaign_count() == before + 1


# MARK: - Slow clients


def test_slow_clients_do_not_hold_up_others_and_are_closed_when_they_stall(herald: Herald):
    slow_count = 8
    start = b"POST /api/v1/events HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
    trickle = b"X-Slow"  # one byte a second, for longer than the connection timeout
    connections = [socket.create_connection(herald.address, timeout=PATIENCE) for _ in range(slow_count)]
    try:
        for connection in connections:
            connection.sendall(start)
        served = 0
        for byte in trickle:
            for connection in connections:
                connection.sendall(bytes([byte]))
            assert_still_serving(herald)  # the slow ones are open and mid-request
            served += 1
            time.sleep(1)
        assert served == len(trickle)

        # Now they stall: each is closed by the server after the idle timeout, without an answer.
        closed = []
        for connection in connections:
            try:
                closed.append(connection.recv(1024))
            except ConnectionResetError:
                closed.append(b"")
        assert closed == [b""] * slow_count, f"stalled connections got {closed}"
        assert_still_serving(herald)
    finally:
        for connection in connections:
            connection.close()


def test_a_stalled_body_is_freed_by_the_timeout(herald: Herald):
    """Headers whole, body promised and never sent: the server closes the connection after the timeout."""
    campaign = json.dumps(card(herald.app_id)).encode()
    data = request_bytes("POST", "/api/v1/campaigns", {"Authorization": f"Bearer {herald.key}", "Content-Type": "application/json"},
                         campaign[:10], length=len(campaign))
    with socket.create_connection(herald.address, timeout=PATIENCE) as connection:
        connection.sendall(data)
        assert_still_serving(herald)
        assert read_reply(connection).status is None
    assert_still_serving(herald)


# MARK: - Dates, numbers and documents at their edges, from outside


@pytest.mark.parametrize("query", ["from=0000-01-01", "to=0000-12-31", "from=1999-12-31", "to=10000-01-01", "from=2026-02-30"])
def test_a_report_or_stats_range_outside_the_calendar_is_a_400_and_the_server_lives(herald: Herald, query: str):
    campaign = created_campaign(herald, name=f"Range {query}")
    assert_refused(herald.api("GET", f"/api/v1/campaigns/{campaign}/stats?{query}"), statuses={400}, says="from 2000-01-01 to 9999-12-31")
    for target in (f"/reports?{query}", f"/campaigns/{campaign}/report?{query}", f"/campaigns/{campaign}/report.csv?{query}"):
        assert_refused(herald.browser("GET", target), statuses={400})
    assert_still_serving(herald)


def test_a_schedule_that_would_not_read_back_is_refused_and_the_feed_stays_up(herald: Herald):
    poison = card(herald.app_id, name="Poison", schedule={"start": "0000-01-01T00:00:00+18:00"})
    before = herald.campaign_count()
    reply = herald.api("POST", "/api/v1/campaigns", json.dumps(poison).encode())
    assert_refused(reply, statuses={422}, says="schedule.start")
    assert reply.json()["error"]["fields"][0]["path"] == "schedule.start"
    assert herald.campaign_count() == before
    for target in ("/api/v1/feed", "/api/v1/campaigns"):
        assert herald.api("GET", target).status == 200
    assert herald.browser("GET", "/campaigns/export").status == 200
    assert_still_serving(herald)


def test_a_misspelt_key_is_a_422_naming_it(herald: Herald):
    reply = herald.api("POST", "/api/v1/campaigns", json.dumps(card(herald.app_id, priorty=1)).encode())
    assert_refused(reply, statuses={422}, says="priorty")
    assert reply.json()["error"]["fields"] == [
        {"path": "priorty", "message": "Campaign JSON has no such field; did you mean `priority`? Remove it or fix its spelling."}]


def test_a_megabyte_of_empty_fields_is_refused_at_the_limit(herald: Herald):
    flood = b"a&" * (512 * 1024)
    started = time.monotonic()
    reply = herald.browser("POST", "/campaigns", flood)
    elapsed = time.monotonic() - started
    assert_refused(reply, statuses={413}, says="more than the 2,000 fields")
    print(f"1 MiB of a&a&…: {reply.status} in {elapsed * 1000:.1f} ms")
    assert_still_serving(herald)
