"""Language versions in the composer, in a real (headless) Chromium with its script running.

One journey on a server of its own (admin, app and a campaigns:read API key made with the CLI):
compose a card in English with Persian, Arabic, German and Japanese versions, watch the live
preview follow each version (right to left for Persian and Arabic), remove a version after the
confirmation, publish, and read the stored versions back through the JSON API.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from browser_helpers import by_name, click, current_path, scroll_to, submit_with, type_into, visible, wait
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

REPO_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO_ROOT / "test-artifacts" / "screenshots"
ADMIN_EMAIL, ADMIN_PASSWORD = "versions-admin@example.com", "versions-passphrase-1"
COMPOSER = "form[data-composer]"

TITLE = "Spring sale"
BODY = "20% off everything until Sunday."
VERSIONS = {
    "fa": ("Persian (fa)", "rtl", "حراج بهاره"),
    "ar": ("Arabic (ar)", "rtl", "تخفيضات الربيع"),
    "de": ("German (de)", "ltr", "Frühlingsangebot"),
    "ja": ("Japanese (ja)", "ltr", "春のセール"),
}


@pytest.fixture(scope="module")
def versions_herald(tmp_path_factory, herald_cli, herald_serve):
    workdir = tmp_path_factory.mktemp("herald-versions")
    database = workdir / "herald.sqlite"
    herald_cli("user", "create", "--email", ADMIN_EMAIL, "--role", "admin", "--password-stdin",
               database=database, cwd=workdir, stdin=ADMIN_PASSWORD + "\n")
    app_id = herald_cli("app", "create", "--name", "Shop", "--platform", "ios", database=database, cwd=workdir).split()[-1]
    key = herald_cli("key", "create", "--app", app_id, "--name", "reader", "--scope", "campaigns:read",
                     database=database, cwd=workdir).split()[-1]
    with herald_serve(workdir, database) as server:
        yield {"server": server, "key": key}


@pytest.fixture(scope="module", autouse=True)
def separate_cookies(driver):
    """Every test server lives on 127.0.0.1, where cookies ignore the port: start and end clean."""
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    yield
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})


def preview_message(driver: WebDriver, title: str) -> dict:
    """Waits for the composer's live preview to draw `title`, and returns the drawn message's attributes."""
    script = """
        const frame = document.querySelector('iframe[name="preview"]');
        const doc = frame && frame.contentDocument;
        const message = doc && doc.querySelector('[data-message]');
        const title = doc && doc.querySelector('[data-title]');
        const body = doc && doc.querySelector('[data-body]');
        return message ? {dir: message.getAttribute('dir'), lang: message.getAttribute('lang'),
                          title: title ? title.textContent : null, body: body ? body.textContent : null} : null;
    """
    drawn: dict = {}

    def check(d: WebDriver) -> bool:
        result = d.execute_script(script)
        if result and result["title"] == title:
            drawn.update(result)
            return True
        return False

    wait(driver, 15).until(check, message=f"the live preview did not draw {title!r}")
    return drawn


def api_campaign(server, key: str, campaign_id: int) -> dict:
    request = urllib.request.Request(server.url(f"/api/v1/campaigns/{campaign_id}"), headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_compose_versions_preview_each_and_publish(driver, versions_herald):
    server, key = versions_herald["server"], versions_herald["key"]
    driver.get(server.url("/login"))
    type_into(driver, "email", ADMIN_EMAIL)
    type_into(driver, "password", ADMIN_PASSWORD)
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, 'form[action="/login"] button[type="submit"]'))
    wait(driver).until(lambda d: current_path(d) == "/campaigns", message="expected /campaigns after login")

    # Given a card composed in English, the default version
    driver.get(server.url("/campaigns/new"))
    visible(driver, COMPOSER)
    page = driver.find_element(By.TAG_NAME, "html")
    type_into(driver, "name", TITLE)
    type_into(driver, "message.title.text", TITLE)
    type_into(driver, "message.body.text", BODY)
    type_into(driver, "message.imageUrl", "https://example.com/portrait.png")
    type_into(driver, "message.backgroundColor", "#FFFFFF")
    type_into(driver, "message.primaryAction.text", "Shop now")
    type_into(driver, "message.primaryAction.url", "https://example.com/shop")
    type_into(driver, "triggers.0.event", "app_launch")
    drawn = preview_message(driver, TITLE)
    assert drawn["dir"] == "ltr"

    # When four language versions are added from the list, each with its own title
    tablist = driver.find_element(By.CSS_SELECTOR, '[role="tablist"]')
    for tag, (name, direction, title) in VERSIONS.items():
        Select(scroll_to(driver, driver.find_element(By.CSS_SELECTOR, "[data-version-choice]"))).select_by_value(tag)
        click(driver, driver.find_element(By.CSS_SELECTOR, "[data-version-add]"))
        tab = wait(driver).until(lambda d: d.find_element(By.ID, f"version-tab-{tag}"))
        assert tab.get_attribute("aria-selected") == "true"
        assert tab.text == name
        field = by_name(driver, f"message.translations.{tag}.title.text")
        # Then the version's inputs are in its language and direction, the default's value shown as the fallback
        assert field.get_attribute("lang") == tag and field.get_attribute("dir") == direction
        assert field.get_attribute("placeholder") == "\u2068" + TITLE + "\u2069"
        assert field == driver.switch_to.active_element, "the new version's first field has the focus"
        field.send_keys(title)
        # And the live preview follows the version being edited: its title, the default's body, its direction
        drawn = preview_message(driver, title)
        assert drawn["dir"] == direction, f"{tag}: {drawn}"
        assert drawn["lang"] == tag
        assert drawn["body"] == BODY, "a part the version leaves empty falls back to the default"
    assert page.is_enabled(), "adding versions reloaded the page"
    assert [t.get_attribute("data-version-tab") for t in tablist.find_elements(By.CSS_SELECTOR, '[role="tab"]')] == ["", "fa", "ar", "de", "ja"]

    # When the tabs are switched with the keyboard
    de_tab = driver.find_element(By.ID, "version-tab-de")
    click(driver, de_tab)
    de_tab.send_keys("\ue014")  # Arrow right: the next tab, Japanese
    wait(driver).until(lambda d: d.find_element(By.ID, "version-tab-ja").get_attribute("aria-selected") == "true")
    assert driver.switch_to.active_element.get_attribute("id") == "version-tab-ja"
    assert preview_message(driver, VERSIONS["ja"][2])["lang"] == "ja"

    # And the Persian one is shown
    click(driver, driver.find_element(By.ID, "version-tab-fa"))
    assert not driver.find_element(By.ID, "field-message-translations-fa").get_attribute("hidden")
    assert preview_message(driver, VERSIONS["fa"][2])["dir"] == "rtl"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOTS / "composer-persian-version.png"))

    # When a fifth version is added and removed again, after the confirmation
    Select(scroll_to(driver, driver.find_element(By.CSS_SELECTOR, "[data-version-choice]"))).select_by_value("tr")
    click(driver, driver.find_element(By.CSS_SELECTOR, "[data-version-add]"))
    remove = wait(driver).until(lambda d: d.find_element(By.CSS_SELECTOR, '[data-version-panel="tr"] [data-version-remove]'))
    click(driver, remove)
    alert = wait(driver).until(EC.alert_is_present())
    assert "Turkish (tr)" in alert.text
    alert.accept()
    wait(driver).until(lambda d: not d.find_elements(By.ID, "version-tab-tr"), message="the Turkish version stayed")
    assert driver.find_element(By.ID, "version-tab-default").get_attribute("aria-selected") == "true"
    # (and Turkish is offered again)
    assert driver.find_elements(By.CSS_SELECTOR, '[data-version-choice] option[value="tr"]')

    # And the campaign is published
    publish = [b for b in driver.find_elements(By.CSS_SELECTOR, 'button[name="intent"][value="publish"]')][0]
    submit_with(driver, publish)
    problems = [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".error-summary li")]
    assert not problems, problems
    wait(driver).until(lambda d: current_path(d).rsplit("/", 1)[-1].isdigit(), message="not published")
    campaign_id = int(current_path(driver).rsplit("/", 1)[-1])

    # Then the stored campaign, read through the API, has the four versions and nothing else
    stored = api_campaign(server, key, campaign_id)
    translations = stored["message"]["translations"]
    assert sorted(translations) == sorted(VERSIONS)
    for tag, (_, _, title) in VERSIONS.items():
        assert translations[tag] == {"title": {"text": title}}, translations[tag]
    assert stored["message"]["title"]["text"] == TITLE

    # And the saved campaign's preview page draws each version, right to left for Persian and Arabic
    for tag, (name, direction, title) in VERSIONS.items():
        driver.get(server.url(f"/campaigns/{campaign_id}/preview?language={tag}"))
        frame = visible(driver, "iframe[data-preview-frame]")
        driver.switch_to.frame(frame)
        message = visible(driver, "[data-message]")
        assert message.get_attribute("dir") == direction, tag
        assert driver.find_element(By.CSS_SELECTOR, "[data-title]").text == title
        driver.switch_to.default_content()
        assert driver.find_element(By.CSS_SELECTOR, f'input[name="language"][value="{tag}"]').is_selected()

    # And editing the campaign keeps them all when it is saved again
    driver.get(server.url(f"/campaigns/{campaign_id}/edit"))
    visible(driver, COMPOSER)
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, 'button[name="intent"][value="draft"]'))
    assert sorted(api_campaign(server, key, campaign_id)["message"]["translations"]) == sorted(VERSIONS)
