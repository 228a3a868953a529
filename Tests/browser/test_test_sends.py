"""A marketer's test sends, in a real browser, against the real server.

In-app: the demo page is the test device. Before the test it says, for each event it fires, why nothing
showed (no campaign has the trigger; a campaign does not target this browser); the marketer adds its
installation as a test device, sends a draft from the campaign's page with the keyboard alone, and the
demo page shows the draft, and says so, again and again while the test lasts. The draft stays a draft at
revision 1. The demo page then says all this in the reader's console language (Persian).

Push: a campaign is sent as a test to four test devices through the mock APNs and FCM; the campaign page
follows each device to its answer without being reloaded: sent, failed with the provider's reason, a dead
token, no token.

Screenshots: test-artifacts/screenshots/test-send-*.png.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser_helpers import axe_violations, replaced, submit_with, visible, wait
from conftest import REPO_ROOT
from push_providers import give_app_the_mock, mock_providers

SCREENSHOTS = REPO_ROOT / "test-artifacts" / "screenshots"
EMAIL, PASSWORD = "tester@example.com", "test-sends-passphrase"
FIND_MESSAGE = "return document.querySelector('[data-herald-message]')"


def call(base: str, method: str, path: str, key: str, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method, headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


@pytest.fixture(scope="module")
def world(tmp_path_factory, herald_cli, herald_serve):
    folder = tmp_path_factory.mktemp("test-sends")
    database = folder / "herald.sqlite"
    herald_cli("user", "create", "--email", EMAIL, "--role", "admin", "--password-stdin", database=database, cwd=folder, stdin=PASSWORD + "\n")
    app = herald_cli("app", "create", "--name", "Web shop", "--platform", "web", "--platform", "ios", "--platform", "android",
                     database=database, cwd=folder).split()[-1]
    key = herald_cli("key", "create", "--app", app, "--scope", "feed:read", "--scope", "events:write", "--scope", "campaigns:read",
                     "--scope", "campaigns:write", database=database, cwd=folder).split()[-1]
    with mock_providers(folder / "mock") as mock:
        give_app_the_mock(herald_cli, database, folder, app, mock)
        with herald_serve(folder, database, "--push-trust-roots", mock.certificate) as server:
            yield {"server": server, "app": int(app), "key": key, "mock": mock, "database": database, "folder": folder}


def sign_in(driver, server, language: str = "en"):
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.get(server.url("/login"))
    visible(driver, "#field-email").send_keys(EMAIL)
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.ID, "field-password").send_keys(PASSWORD + Keys.ENTER)
    wait(driver).until(replaced(old), message="sign-in")
    driver.get(server.url("/account"))
    driver.execute_script(f"document.getElementById('field-language').value = '{language}'")
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, 'form[action="/account"] button[type="submit"]'))


def start_demo(driver, server, key: str) -> str:
    """Opens the demo page and starts the web client with `key` (the page starts by itself with a key it kept)."""
    driver.get(server.url("/sdk/v1/demo"))
    wait(driver).until(lambda d: d.find_element(By.ID, "demo-key-controls").is_enabled(), message="the demo page's key form")
    if driver.execute_script("return localStorage.getItem('herald.demo.apiKey')") != key:
        driver.find_element(By.ID, "demo-key").send_keys(key + Keys.ENTER)
    wait(driver).until(lambda d: d.find_element(By.ID, "demo-events").is_enabled(), message="the web client to start")
    return wait(driver).until(
        lambda d: (text := d.find_element(By.ID, "demo-installation").text.strip()) not in ("", "—") and text,
        message="the demo page's installation id")


def fire(driver, event: str) -> str:
    """Fires `event` from the demo page's form; returns the newest outcome it shows."""
    before = len(driver.find_elements(By.CSS_SELECTOR, "#demo-outcomes li"))
    field = driver.find_element(By.ID, "demo-event")
    field.clear()
    field.send_keys(event + Keys.ENTER)
    wait(driver).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#demo-outcomes li")) > before, message=f"the outcome of {event}")
    return driver.find_element(By.CSS_SELECTOR, "#demo-outcomes li").text


def test_an_in_app_draft_sent_as_a_test_shows_on_the_demo_page_which_says_why_or_why_not(driver, world):
    server, key, app = world["server"], world["key"], world["app"]
    status, draft = call(server.base_url, "POST", "/api/v1/campaigns", key, {
        "app": app, "name": "Spring draft", "priority": 9, "frequency": {"type": "once"},
        "targeting": {"platforms": ["ios"]}, "triggers": [{"event": "try_me"}],
        "message": {"layout": "modal", "title": {"text": "Spring is here"}, "backgroundColor": "#FFFFFF",
                    "primaryAction": {"text": "OK", "url": "https://shop.example/ok"}},
    })
    assert status == 201, draft
    status, native = call(server.base_url, "POST", "/api/v1/campaigns", key, {
        "app": app, "name": "Phones only", "targeting": {"platforms": ["ios"]}, "triggers": [{"event": "phones"}],
        "message": {"layout": "modal", "title": {"text": "For phones"}},
    })
    assert status == 201 and call(server.base_url, "POST", f"/api/v1/campaigns/{native['id']}/publish", key)[0] == 200

    sign_in(driver, server)
    installation = start_demo(driver, server, key)
    # Why nothing shows: the draft is in no feed yet; the published campaign targets iOS only.
    assert fire(driver, "try_me") == "try_me: nothing shown: no campaign has this trigger."
    assert fire(driver, "phones") == f"phones: nothing shown: campaign {native['id']} does not target this browser."

    # The marketer adds this browser as a test device.
    driver.get(server.url(f"/apps/{app}"))
    visible(driver, "input[name=deviceName]").send_keys("Marketer's browser")
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, "input[name=installationId]").send_keys(installation + Keys.ENTER)
    wait(driver).until(replaced(old), message="the test device form")

    # …and sends the draft as a test, with the keyboard only: Tab to the device, Space, Tab to the button, Enter.
    driver.get(server.url(f"/campaigns/{draft['id']}"))
    panel = visible(driver, "#test-sends")
    assert "Send a test" in panel.text and "Marketer's browser" in panel.text
    box = panel.find_element(By.CSS_SELECTOR, "input[type=checkbox][name=devices]")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus()", box)
    driver.switch_to.active_element.send_keys(Keys.SPACE)
    assert box.is_selected()
    driver.switch_to.active_element.send_keys(Keys.TAB)
    focused = driver.switch_to.active_element
    assert focused.get_attribute("type") == "submit" and focused.text == "Send the test", focused.get_attribute("outerHTML")
    old = driver.find_element(By.TAG_NAME, "html")
    focused.send_keys(Keys.ENTER)
    wait(driver).until(replaced(old), message="the test send")
    flash = visible(driver, ".flash")
    assert flash.get_attribute("role") == "status" and "Test of “\u2068Spring draft\u2069” sent to 1 test device." in flash.text
    row = visible(driver, '#test-sends tr[data-test-send-status="in_feed"]')
    assert "Marketer's browser" in row.text and installation in row.text and "In its feed until" in row.text
    assert axe_violations(driver) == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOTS / "test-send-in-app.png"))

    # The demo page (a new page load: the client polls the feed as a test device) shows it, again and again.
    start_demo(driver, server, key)
    for _ in range(2):
        assert fire(driver, "try_me") == f"try_me: campaign {draft['id']} shown."
        host = wait(driver).until(lambda d: d.execute_script(FIND_MESSAGE), message="the test message")
        assert host.get_attribute("data-herald-message") == str(draft["id"])
        assert "Spring is here" in driver.execute_script("return arguments[0].shadowRoot.textContent", host)
        driver.switch_to.active_element.send_keys(Keys.ESCAPE)
        wait(driver).until(lambda d: d.execute_script(FIND_MESSAGE) is None, message="the message to close")
    driver.save_screenshot(str(SCREENSHOTS / "test-send-demo-page.png"))

    # The campaign itself is untouched: a draft at revision 1.
    status, stored = call(server.base_url, "GET", f"/api/v1/campaigns/{draft['id']}", key)
    assert status == 200 and stored["status"] == "draft" and stored["revision"] == 1

    # In the reader's console language: Persian words, Persian digits.
    sign_in(driver, server, "fa")
    start_demo(driver, server, key)
    assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "fa"
    outcome = fire(driver, "nothing_here")
    assert outcome == "nothing_here: چیزی نمایش داده نشد: هیچ کارزاری این رویداد آغازگر را ندارد.", outcome
    persian_id = str(native["id"]).translate(str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹"))
    assert fire(driver, "phones") == f"phones: چیزی نمایش داده نشد: کارزار {persian_id} این مرورگر را هدف نمی‌گیرد."
    driver.save_screenshot(str(SCREENSHOTS / "test-send-demo-page-fa.png"))


def test_a_push_test_is_followed_on_the_campaign_page_to_each_devices_answer(driver, world):
    server, key, app, mock = world["server"], world["key"], world["app"], world["mock"]
    devices = {
        "iid-ok": {"platform": "ios", "pushProvider": "apns", "pushToken": "ab" * 32},
        "iid-bad": {"platform": "android", "pushProvider": "fcm", "pushToken": "bad-fcm-token"},
        "iid-gone": {"platform": "android", "pushProvider": "fcm", "pushToken": "gone-fcm-token"},
        "iid-none": {"platform": "ios"},
    }
    for installation, registration in devices.items():
        status, answer = call(server.base_url, "PUT", f"/api/v1/installations/{installation}", key,
                              {**registration, "language": "en", "notificationsAllowed": True})
        assert status in (200, 201), answer
    status, _ = call(server.base_url, "PUT", "/api/v1/installations/iid-stranger", key,
                     {"platform": "ios", "pushProvider": "apns", "pushToken": "cd" * 32, "notificationsAllowed": True})
    assert status in (200, 201)
    status, campaign = call(server.base_url, "POST", "/api/v1/campaigns", key, {
        "app": app, "name": "Push draft", "channel": "push", "push": {"title": "Half price", "body": "Today only"}})
    assert status == 201, campaign
    sign_in(driver, server)
    for installation in devices:
        driver.get(server.url(f"/apps/{app}"))
        visible(driver, "input[name=deviceName]").send_keys(installation.upper())
        old = driver.find_element(By.TAG_NAME, "html")
        driver.find_element(By.CSS_SELECTOR, "input[name=installationId]").send_keys(installation + Keys.ENTER)
        wait(driver).until(replaced(old), message="the test device form")

    driver.get(server.url(f"/campaigns/{campaign['id']}"))
    for installation in devices:
        driver.execute_script("arguments[0].click()", driver.find_element(By.CSS_SELECTOR, f'input[name=devices][value="{installation}"]'))
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, f'form[action="/campaigns/{campaign["id"]}/test-sends"] button[type=submit]'))
    page = driver.find_element(By.TAG_NAME, "html")

    def statuses(d):
        # The page replaces its rows as answers arrive: a row read while it is replaced is read at the next poll.
        try:
            rows = d.find_elements(By.CSS_SELECTOR, "#test-sends tr[data-test-send-status]")
            return {row.find_element(By.CSS_SELECTOR, "code").text: (row.get_attribute("data-test-send-status"), row.text) for row in rows}
        except StaleElementReferenceException:
            return {}

    settled = wait(driver, 30).until(
        lambda d: (found := statuses(d)) and all(status != "pending" for status, _ in found.values()) and found,
        message="every device's answer")
    assert driver.find_element(By.TAG_NAME, "html") == page, "followed without reloading the page"
    assert settled["iid-ok"][0] == "sent" and "Sent at" in settled["iid-ok"][1]
    assert settled["iid-bad"][0] == "failed" and "Failed:" in settled["iid-bad"][1]
    assert settled["iid-gone"][0] == "unregistered" and "no longer valid" in settled["iid-gone"][1]
    assert settled["iid-none"][0] == "no_token" and "no push token" in settled["iid-none"][1]
    sent = [r for r in mock.device_requests() if r["path"].startswith("/3/device/")]
    assert [r["path"] for r in sent] == ["/3/device/" + "ab" * 32], "nobody else is sent anything"
    driver.save_screenshot(str(SCREENSHOTS / "test-send-push.png"))
    status, stored = call(server.base_url, "GET", f"/api/v1/campaigns/{campaign['id']}", key)
    assert stored["status"] == "draft" and stored["revision"] == 1
