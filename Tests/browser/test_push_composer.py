"""The push composer in a real (headless) Chromium with its script running, the console in Persian.

A marketer opens "New push notification" from the campaign list, reads how many registered devices
the targeting reaches (counted again when a platform is ticked), writes a Persian notification,
watches the bytes left for APNs and FCM fall as they type (in Persian digits) and the live preview
draw it right to left, adds an English version, pastes a Japanese body that no provider would take
with a long custom value
(the counter turns to "over" before saving, and saving refuses it at the field), shortens it, and
saves the draft; the JSON API then reads back exactly what was typed.
"""

from __future__ import annotations

import json
import urllib.request

import pytest
from browser_helpers import axe_violations, by_name, click, current_path, scroll_to, submit_with, type_into, visible, wait
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

EMAIL, PASSWORD = "push-composer@example.com", "push-composer-passphrase-1"
PERSIAN_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")


@pytest.fixture(scope="module")
def composer_herald(tmp_path_factory, herald_cli, herald_serve):
    workdir = tmp_path_factory.mktemp("herald-push-composer")
    database = workdir / "herald.sqlite"
    herald_cli("user", "create", "--email", EMAIL, "--role", "admin", "--password-stdin", database=database, cwd=workdir, stdin=PASSWORD + "\n")
    app_id = herald_cli("app", "create", "--name", "فروشگاه", "--platform", "ios", "--platform", "android", database=database, cwd=workdir).split()[-1]
    key = herald_cli("key", "create", "--app", app_id, "--name", "reader", "--scope", "campaigns:read", database=database, cwd=workdir).split()[-1]
    sdk = herald_cli("key", "create", "--app", app_id, "--name", "sdk", "--scope", "events:write", database=database, cwd=workdir).split()[-1]
    with herald_serve(workdir, database) as server:
        # The audience the composer counts: two Persian iPhones with tokens, an Android phone without one.
        for installation, device in (("iphone-1", {"platform": "ios", "pushProvider": "apns", "pushToken": "ab" * 32}),
                                     ("iphone-2", {"platform": "ios", "pushProvider": "apns", "pushToken": "cd" * 32}),
                                     ("pixel-1", {"platform": "android"})):
            request = urllib.request.Request(
                server.url(f"/api/v1/installations/{installation}"), method="PUT",
                data=json.dumps({**device, "language": "fa", "notificationsAllowed": True}).encode(),
                headers={"Authorization": f"Bearer {sdk}", "Content-Type": "application/json"})
            urllib.request.urlopen(request, timeout=30).close()
        yield server, key


@pytest.fixture(scope="module", autouse=True)
def separate_cookies(driver):
    """Every test server lives on 127.0.0.1, where cookies ignore the port: start and end clean."""
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    yield
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})


def counter(driver: WebDriver, tag: str = ""):
    return driver.find_element(By.CSS_SELECTOR, f'[data-push-bytes="{tag}"]')


def counter_changes(driver: WebDriver, tag: str, before: str) -> str:
    """Waits for the script to put a new count in, and returns it."""
    wait(driver, 15).until(lambda d: counter(d, tag).text not in ("", before), message=f"the {tag or 'default'} count never changed from {before!r}")
    return counter(driver, tag).text


def left(text: str, provider: str) -> int:
    """The bytes left that the counter says for `provider`, read back from Persian digits."""
    part = next(piece for piece in text.split(" · ") if piece.startswith(provider))
    digits = "".join(ch for ch in part.split(":", 1)[1].split("از")[0] if ch.isdigit())
    return int(digits.translate(str.maketrans("۰۱۲۳۴۵۶۷۸۹", "0123456789")))


def set_value(driver: WebDriver, name: str, value: str) -> None:
    """Pastes `value` at once (typing a thousand letters key by key would take the test's time)."""
    field = scroll_to(driver, by_name(driver, name))
    driver.execute_script(
        "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input', {bubbles: true}));", field, value)


def preview_card(driver: WebDriver, text: str) -> dict:
    """Waits for the composer's frame to draw a notification card holding `text`; answers its direction and language."""
    script = """
        const frame = document.querySelector('iframe[name="preview"]');
        const card = frame && frame.contentDocument && frame.contentDocument.querySelector('.push-card');
        return card ? {text: card.textContent, dir: getComputedStyle(card).direction, lang: card.getAttribute('lang')} : null;
    """
    drawn: dict = {}

    def check(d: WebDriver) -> bool:
        result = d.execute_script(script)
        if result and text in result["text"]:
            drawn.update(result)
            return True
        return False

    wait(driver, 15).until(check, message=f"the live preview did not draw {text!r}")
    return drawn


def test_compose_a_persian_notification_with_the_bytes_left_as_you_type(driver, composer_herald):
    server, key = composer_herald
    driver.get(server.url("/login"))
    type_into(driver, "email", EMAIL)
    type_into(driver, "password", PASSWORD)
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, 'form[action="/login"] button[type="submit"]'))
    driver.get(server.url("/account"))
    driver.execute_script("document.getElementById('field-language').value = 'fa';")
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, 'form[action="/account"] button[type="submit"]'))

    # From the campaign list, "New push notification".
    driver.get(server.url("/campaigns"))
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, 'a[href="/campaigns/new?channel=push"]'))
    assert driver.find_element(By.TAG_NAME, "html").get_attribute("dir") == "rtl"
    assert driver.find_element(By.TAG_NAME, "h1").text == "اعلان پوش تازه"
    assert not driver.find_elements(By.CSS_SELECTOR, '[name="message.layout"]'), "no in-app layouts in the push composer"
    empty = counter(driver).text
    assert empty.startswith("APNs:") and "FCM:" in empty and any(ch in "۰۱۲۳۴۵۶۷۸۹" for ch in empty), empty

    # The audience under the targeting, in Persian digits: counted with the page, again as targeting changes.
    audience = driver.find_element(By.CSS_SELECTOR, "[data-audience]")
    assert audience.text == "۳ نصب ثبت‌شده با این هدف‌گیری جور است. ۲ مورد از آن‌ها اعلان دریافت می‌کند.", audience.text
    android = scroll_to(driver, driver.find_element(By.CSS_SELECTOR, 'input[name="targeting.platforms"][value="android"]'))
    click(driver, android)
    wait(driver, 15).until(lambda d: d.find_element(By.CSS_SELECTOR, "[data-audience]").text.startswith("۱ نصب"),
                           message="the audience never counted the Android phone alone")
    assert driver.find_element(By.CSS_SELECTOR, "[data-audience]").text.endswith("۰ مورد از آن‌ها اعلان دریافت می‌کند."), audience.text
    click(driver, android)
    wait(driver, 15).until(lambda d: d.find_element(By.CSS_SELECTOR, "[data-audience]").text.startswith("۳ نصب"))

    # Typing Persian: two bytes a letter, counted by the server as it will send it.
    type_into(driver, "name", "حراج پاییز")
    type_into(driver, "push.title", "حراج پاییز")
    after_title = counter_changes(driver, "", empty)
    type_into(driver, "push.body", "نیم‌بها، فقط امروز")
    after_body = counter_changes(driver, "", after_title)
    body_bytes = len("نیم‌بها، فقط امروز".encode())
    assert left(after_title, "APNs") - left(after_body, "APNs") == body_bytes + len(',"body":""'), (after_title, after_body)
    card = preview_card(driver, "نیم‌بها، فقط امروز")
    assert card["dir"] == "rtl", card

    # An English version: its own count, and the preview in English, left to right.
    Select(scroll_to(driver, driver.find_element(By.CSS_SELECTOR, "[data-version-choice]"))).select_by_value("en")
    click(driver, driver.find_element(By.CSS_SELECTOR, "[data-version-add]"))
    visible(driver, '[data-version-panel="en"]')
    english_before = counter(driver, "en").text
    type_into(driver, "push.translations.en.title", "Autumn sale")
    counter_changes(driver, "en", english_before)
    english = preview_card(driver, "Autumn sale")
    assert english["dir"] == "ltr" and english["lang"] == "en", english

    # A Japanese body far over the limits, pasted into the default version: "over" before saving...
    click(driver, driver.find_element(By.CSS_SELECTOR, '[data-version-tab=""]'))
    set_value(driver, "push.body", "本" * 1000)
    set_value(driver, "data.0.key", "note")
    set_value(driver, "data.0.value", "語" * 400)
    wait(driver, 15).until(lambda d: "push-bytes-over" in counter(d).get_attribute("class"), message="the count never turned to over")
    assert "بیش از سقف" in counter(driver).text, counter(driver).text
    # ...and saving refuses it at the field, keeping what was typed.
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, 'button[name="intent"][value="draft"]'))
    error = visible(driver, "#field-push-body-error")
    assert "APNs" in error.text and "۴٬۰۹۶" in error.text, error.text
    assert by_name(driver, "push.translations.en.title").get_attribute("value") == "Autumn sale"

    # Shortened, it saves; the API reads back exactly what was typed.
    set_value(driver, "push.body", "نیم‌بها، فقط امروز")
    set_value(driver, "data.0.value", "پاییز")
    wait(driver, 15).until(lambda d: "push-bytes-over" not in counter(d).get_attribute("class"))
    violations = axe_violations(driver)
    assert not violations, violations
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, 'button[name="intent"][value="draft"]'))
    campaign_id = int(current_path(driver).rsplit("/", 1)[-1])
    request = urllib.request.Request(server.url(f"/api/v1/campaigns/{campaign_id}"), headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        stored = json.loads(response.read())
    assert stored["channel"] == "push"
    assert stored["push"]["title"] == "حراج پاییز" and stored["push"]["body"] == "نیم‌بها، فقط امروز"
    assert stored["push"]["translations"] == {"en": {"title": "Autumn sale"}}, stored["push"]
    assert stored["data"] == [{"key": "note", "value": "پاییز"}], stored["data"]

