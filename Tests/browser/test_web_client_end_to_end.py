"""herald.js on a shop's own page, against the real server, in a real browser.

A shop (its own origin, allowed on the app) imports /sdk/v1/herald.mjs from Herald, fires the event
of each of six campaigns (one per layout, images from an HTTPS image host), and a user clicks or
dismisses each message; the events then stand in the campaigns' reports. A message seen just before
the user leaves the page reaches the report through the beacon sent on page hide. A page on an origin
the app does not allow gets no CORS headers, so its browser cannot read the feed.

Screenshots: test-artifacts/screenshots/web-client-<layout>.png.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_helpers import replaced, visible, wait
from conftest import CHROMEDRIVER, CHROMIUM, REPO_ROOT
from herald_js_site import png
from web_fixtures import IMAGE_HOST, image_server, page_server

SCREENSHOTS = REPO_ROOT / "test-artifacts" / "screenshots"

LAYOUTS = {
    "card": {
        "layout": "card", "title": {"text": "Spring sale", "color": "#202124"}, "body": {"text": "20% off everything this week"},
        "imageUrl": f"https://{IMAGE_HOST}/card.png", "backgroundColor": "#FFFFFF",
        "primaryAction": {"text": "Shop now", "buttonColor": "#1A73E8", "textColor": "#FFFFFF", "url": "https://shop.example/sale"},
        "secondaryAction": {"text": "Later"},
    },
    "modal": {
        "layout": "modal", "title": {"text": "New arrivals"}, "body": {"text": "The autumn collection is here."},
        "imageUrl": f"https://{IMAGE_HOST}/modal.png", "backgroundColor": "#FFF8E1",
        "primaryAction": {"text": "Look", "url": "https://shop.example/new"},
    },
    "image_only": {"layout": "image_only", "imageUrl": f"https://{IMAGE_HOST}/image_only.png", "action": {"url": "https://shop.example/poster"}},
    "banner": {
        "layout": "banner", "title": {"text": "Free delivery"}, "body": {"text": "On orders over 30 €"},
        "backgroundColor": "#E8F0FE", "action": {"url": "https://shop.example/delivery"}, "dismiss": {"seconds": 60},
    },
    "slideup": {"layout": "slideup", "body": {"text": "Your basket is waiting"}, "imageUrl": f"https://{IMAGE_HOST}/slideup.png", "slideFrom": "bottom", "dismiss": {"seconds": 60}},
    "fullscreen": {
        "layout": "fullscreen", "title": {"text": "Winter is coming", "color": "#FFFFFF"}, "body": {"text": "Coats from 49 €", "color": "#FFFFFF"},
        "imageUrl": f"https://{IMAGE_HOST}/fullscreen.png", "backgroundColor": "#1B1B1F",
        "primaryAction": {"text": "See coats", "url": "https://shop.example/coats"}, "secondaryAction": {"text": "No thanks"},
        "orientation": "any",
    },
}

# What the user does with each message: click its main part, or dismiss it.
ADMIN_EMAIL, ADMIN_PASSWORD = "web-admin@example.com", "web-passphrase-1"

REACTIONS = {"card": "click", "modal": "escape", "image_only": "click", "banner": "close", "slideup": "close", "fullscreen": "click"}


def _call(base: str, method: str, path: str, key: str, body: object | None = None, headers: dict[str, str] | None = None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {key}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def _shop_page(herald: str) -> str:
    # The page a shop would write: import the module from Herald, start it, keep what it renders.
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: sans-serif; margin: 0; min-height: 100vh; background: #f3f4f6">
<header style="padding: 16px; background: #263238; color: white">A shop</header>
<main style="padding: 16px"><p>Products, a basket, the usual.</p><button id="buy">Buy</button></main>
<script type="module">
  import {{ Herald }} from "{herald}/sdk/v1/herald.mjs";
  const params = new URLSearchParams(location.search);
  window.clicks = [];
  window.herald = await Herald.start({{
    server: "{herald}", apiKey: params.get("key"), minimumIntervalSeconds: 0,
    // The shop stays on the page to be tested: returning false keeps herald.js from following the link.
    // ?decide=discard: the shop declines every message (during a checkout, say), a `delegate` discard.
    delegate: {{
      clicked(message, action, url) {{ window.clicks.push({{ campaign: message.campaignId, action, url }}); return false; }},
      decide() {{ return params.get("decide") || "show"; }},
    }},
  }});
  window.heraldReady = true;
</script></body></html>"""


def _elsewhere_page(herald: str) -> str:
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Elsewhere</title></head><body>
<script>
  window.feedAnswer = fetch("{herald}/api/v1/feed", {{ headers: {{ Authorization: "Bearer " + new URLSearchParams(location.search).get("key") }} }})
    .then(answer => "read " + answer.status, error => "blocked: " + error.name);
</script></body></html>"""


@pytest.fixture(scope="module")
def world(tmp_path_factory, herald_cli, herald_serve):
    folder = tmp_path_factory.mktemp("web-client")
    database = folder / "herald.sqlite"
    colours = {"card": (26, 115, 232), "modal": (255, 179, 0), "image_only": (67, 160, 71), "slideup": (142, 36, 170), "fullscreen": (55, 71, 79)}
    images = {f"{name}.png": png(600, 400, lambda x, y, rgb=rgb: rgb) for name, rgb in colours.items()}
    with image_server(folder, images) as image_port, \
            page_server({"shop.html": lambda: _shop_page(world_state["herald"]), "elsewhere.html": lambda: _elsewhere_page(world_state["herald"])}) as shop_port, \
            page_server({"elsewhere.html": lambda: _elsewhere_page(world_state["herald"])}) as other_port:
        world_state: dict[str, str] = {}
        herald_cli("user", "create", "--email", ADMIN_EMAIL, "--role", "admin", "--password-stdin",
                   database=database, cwd=folder, stdin=ADMIN_PASSWORD + "\n")
        app = herald_cli("app", "create", "--name", "Web shop", "--platform", "web", database=database, cwd=folder).split()[-1]
        key = herald_cli("key", "create", "--app", app, "--scope", "feed:read", "--scope", "events:write",
                         "--scope", "campaigns:read", "--scope", "campaigns:write", database=database, cwd=folder).split()[-1]
        shop_origin = f"http://127.0.0.1:{shop_port}"
        herald_cli("app", "origin", "add", "--app", app, shop_origin, database=database, cwd=folder)
        with herald_serve(folder, database) as server:
            world_state["herald"] = server.base_url
            campaigns = {}
            for priority, (layout, message) in enumerate(LAYOUTS.items(), start=1):
                status, _, body = _call(server.base_url, "POST", "/api/v1/campaigns", key, {
                    "app": int(app), "name": f"Web {layout}", "priority": priority, "message": message,
                    "triggers": [{"event": f"show_{layout}"}], "frequency": {"type": "always"},
                })
                assert status == 201, body
                campaign = json.loads(body)["id"]
                status, _, body = _call(server.base_url, "POST", f"/api/v1/campaigns/{campaign}/publish", key)
                assert status == 200, body
                campaigns[layout] = campaign
            yield {"server": server, "key": key, "app": int(app), "campaigns": campaigns, "image_port": image_port,
                   "shop": f"{shop_origin}/shop.html?key={key}", "elsewhere": f"http://127.0.0.1:{other_port}/elsewhere.html?key={key}",
                   "shop_origin": shop_origin, "other_origin": f"http://127.0.0.1:{other_port}"}


@pytest.fixture(scope="module")
def browser(world):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900", "--lang=en-US",
                     f"--host-resolver-rules=MAP {IMAGE_HOST} 127.0.0.1:{world['image_port']}", "--ignore-certificate-errors"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _until(condition, seconds: float = 15, every: float = 0.1, what: str = "condition"):
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)


def _stats(world, layout: str) -> dict:
    status, _, body = _call(world["server"].base_url, "GET", f"/api/v1/campaigns/{world['campaigns'][layout]}/stats", world["key"])
    assert status == 200, body
    return json.loads(body)


def _open_shop(browser, world):
    browser.get(world["shop"])
    _until(lambda: browser.execute_script("return window.heraldReady === true"), what="herald.js to start on the shop page")


# The message element; what the user acts on is inside its shadow root.
FIND_MESSAGE = "return document.querySelector('[data-herald-message][data-layout=\"' + arguments[0] + '\"]')"
# Click: a layout's main button, or the whole message when it is one tap target. Close: its close button.
SETTLED = "const done = arguments[1]; Promise.all(arguments[0].shadowRoot.getAnimations().map(a => a.finished)).then(() => done(), () => done())"
TARGETS = {"click": '[data-button="primary"], button.tap', "close": "[data-close]"}


def test_each_layout_shows_on_the_shop_page_and_lands_in_its_report(browser, world):
    _open_shop(browser, world)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for layout in LAYOUTS:
        outcome = browser.execute_script(f"return JSON.stringify(window.herald.triggerEvent('show_{layout}'))")
        assert "displayed" in outcome or "pending" in outcome, f"{layout}: {outcome}"
        host = _until(lambda: browser.execute_script(FIND_MESSAGE, layout), what=f"the {layout} message")
        assert host.get_attribute("data-herald-message") == str(world["campaigns"][layout])
        # The impression is reported once the message is really drawn (its image loaded): queued, or, since
        # the client uploads at its next tick, already counted by the server.
        _until(lambda: browser.execute_script(
            "return window.herald.queuedEvents.some(e => e.type === 'impression' && e.campaignId === arguments[0])",
            world["campaigns"][layout]) or _stats(world, layout)["totals"]["impressions"] >= 1, what=f"the {layout} impression")
        browser.execute_async_script(SETTLED, host)  # the message's entrance animation has ended
        browser.save_screenshot(str(SCREENSHOTS / f"web-client-{layout}.png"))
        reaction = REACTIONS[layout]
        if reaction == "escape":
            browser.switch_to.active_element.send_keys(Keys.ESCAPE)
        else:
            host.shadow_root.find_element(By.CSS_SELECTOR, TARGETS[reaction]).click()
        _until(lambda: not browser.execute_script(FIND_MESSAGE, layout), what=f"the {layout} message to go")
    assert browser.execute_script("return window.herald.flush().then(r => JSON.stringify(r))") is not None
    _until(lambda: browser.execute_script("return window.herald.queuedEvents.length === 0"), what="the events to upload")

    for layout, reaction in REACTIONS.items():
        stats = _stats(world, layout)
        totals = stats["totals"]
        assert totals["impressions"] == 1, (layout, totals)
        # The browser is one device, shown each message once and converting on none
        assert (stats["funnel"]["shownDevices"], stats["funnel"]["convertedDevices"], stats["funnel"]["conversionRate"]) == (1, 0, 0), stats["funnel"]
        if reaction == "click":
            assert totals["clicks"] == 1, (layout, totals)
        else:
            assert totals["dismissals"] == 1, (layout, totals)
    clicked = browser.execute_script("return window.clicks")
    assert {click["campaign"] for click in clicked} == {world["campaigns"][layout] for layout, r in REACTIONS.items() if r == "click"}


def test_a_message_seen_before_leaving_reaches_the_report_by_beacon(browser, world):
    before = _stats(world, "banner")["totals"]["impressions"]
    _open_shop(browser, world)
    browser.execute_script("window.herald.triggerEvent('show_banner')")
    _until(lambda: browser.execute_script(
        "return window.herald.queuedEvents.some(e => e.type === 'impression')"), what="the banner's impression")
    browser.get("about:blank")  # page hide: the queue leaves by navigator.sendBeacon
    _until(lambda: _stats(world, "banner")["totals"]["impressions"] == before + 1, seconds=20, every=0.3,
           what="the beacon's impression in the report")


def test_a_message_the_shop_declines_reaches_the_report_as_a_discard(browser, world):
    # Given the shop declining every message
    before = _stats(world, "card")
    browser.get(world["shop"] + "&decide=discard")
    _until(lambda: browser.execute_script("return window.heraldReady === true"), what="herald.js to start on the shop page")
    # When the card is chosen twice and declined, and the events are uploaded
    for _ in range(2):
        outcome = json.loads(browser.execute_script("return JSON.stringify(window.herald.triggerEvent('show_card'))"))
        assert outcome == {"event": "show_card", "outcome": "discarded", "reason": "delegate", "campaign": world["campaigns"]["card"]}, outcome
    assert [(count["reason"], count["count"]) for count in browser.execute_script("return window.herald.pendingDiscards")] == [("delegate", 2)]
    browser.execute_script("return window.herald.flush().then(r => JSON.stringify(r))")
    _until(lambda: browser.execute_script("return window.herald.pendingDiscards.length === 0"), what="the discard counts to upload")
    # Then the card's report counts them, once, as chosen and not shown
    after = _stats(world, "card")
    assert after["discardsByReason"].get("delegate", 0) == before["discardsByReason"].get("delegate", 0) + 2, after["discardsByReason"]
    assert after["funnel"]["chosen"] == before["funnel"]["chosen"] + 2 and after["funnel"]["shown"] == before["funnel"]["shown"], after["funnel"]


def test_only_allowed_origins_get_cors(browser, world):
    base, key = world["server"].base_url, world["key"]
    status, headers, _ = _call(base, "GET", "/api/v1/feed", key, headers={"Origin": world["shop_origin"]})
    assert status == 200 and headers.get("Access-Control-Allow-Origin") == world["shop_origin"]
    status, headers, _ = _call(base, "GET", "/api/v1/feed", key, headers={"Origin": world["other_origin"]})
    assert "Access-Control-Allow-Origin" not in headers and status == 403

    browser.get(world["elsewhere"])
    _until(lambda: browser.execute_script("return window.feedAnswer !== undefined"), what="the page's fetch")
    answer = browser.execute_async_script("const done = arguments[0]; window.feedAnswer.then(done)")
    assert answer.startswith("blocked"), answer


def test_the_demo_page_is_a_test_device_for_a_test_on_device_draft(browser, world):
    """The composer's "test on device" reaches a browser: the demo page shows its installation id, the
    marketer adds it as a test device, and a draft marked for test devices shows there at once."""
    server, key = world["server"], world["key"]
    browser.get(server.url("/sdk/v1/demo"))
    wait(browser).until(lambda d: d.find_element(By.ID, "demo-key-controls").is_enabled(), message="the demo page's key form")
    browser.find_element(By.ID, "demo-key").send_keys(key + Keys.ENTER)
    installation = wait(browser).until(
        lambda d: (text := d.find_element(By.ID, "demo-installation").text.strip()) not in ("", "—") and text,
        message="the demo page to show its installation id")

    browser.get(server.url("/login"))
    visible(browser, "input[name=email]").send_keys(ADMIN_EMAIL)
    browser.find_element(By.CSS_SELECTOR, "input[name=password]").send_keys(ADMIN_PASSWORD + Keys.ENTER)
    wait(browser).until(lambda d: "/login" not in d.current_url, message="sign-in")
    browser.get(server.url(f"/apps/{world['app']}"))
    visible(browser, "input[name=deviceName]").send_keys("Marketer's browser")
    old = browser.find_element(By.TAG_NAME, "html")
    browser.find_element(By.CSS_SELECTOR, "input[name=installationId]").send_keys(installation + Keys.ENTER)
    wait(browser).until(replaced(old), message="the test device form")
    assert installation in browser.find_element(By.TAG_NAME, "main").text

    status, _, body = _call(server.base_url, "POST", "/api/v1/campaigns", key, {
        "app": world["app"], "name": "Draft to check", "testOnDevice": True, "priority": 1,
        "message": {"layout": "modal", "title": {"text": "Only on test devices"}, "backgroundColor": "#FFFFFF",
                    "primaryAction": {"text": "OK", "url": "https://shop.example/ok"}},
        "triggers": [{"event": "check_draft"}],
    })
    assert status == 201, body
    draft = json.loads(body)["id"]

    browser.get(server.url("/sdk/v1/demo"))  # the key is remembered in this browser; the client starts again
    wait(browser).until(lambda d: d.find_element(By.ID, "demo-installation").text.strip() == installation, message="the demo client")
    browser.find_element(By.ID, "demo-event").send_keys("check_draft" + Keys.ENTER)
    host = wait(browser).until(lambda d: d.execute_script(FIND_MESSAGE, "modal"), message="the draft on the demo page")
    assert host.get_attribute("data-herald-message") == str(draft)
    assert "Only on test devices" in browser.execute_script("return arguments[0].shadowRoot.textContent", host)
    browser.execute_async_script(SETTLED, host)
    browser.save_screenshot(str(SCREENSHOTS / "web-client-demo-test-device.png"))
    # The demo page keeps the console's strict policy: nothing herald.js draws is refused by it.
    refused = [entry["message"] for entry in browser.get_log("browser") if "Content Security Policy" in entry["message"]]
    assert not refused, refused
