"""A marketer's day in the console (issue 34), in a real browser: the report's date inputs look like the
console's other inputs and its breakdowns fit their frames at desktop widths, and a language version the
composer's script adds is named everywhere its panel says it.
"""

from __future__ import annotations

import json
import urllib.request
import uuid
from datetime import datetime, timezone

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from browser_helpers import click, replaced, visible, wait

EMAIL, PASSWORD = "day-admin@example.com", "day-passphrase-1"
STYLE = ["borderTopWidth", "borderTopStyle", "borderRadius", "minHeight", "paddingTop", "paddingLeft", "fontSize", "backgroundColor", "color"]


@pytest.fixture(scope="module")
def day(tmp_path_factory, herald_cli, herald_serve):
    folder = tmp_path_factory.mktemp("marketer-day")
    database = folder / "herald.sqlite"
    herald_cli("user", "create", "--email", EMAIL, "--role", "admin", "--password-stdin", database=database, cwd=folder, stdin=PASSWORD + "\n")
    app = herald_cli("app", "create", "--name", "Shop", "--platform", "ios", database=database, cwd=folder).split()[-1]
    herald_cli("app", "create", "--name", "Blog", "--platform", "web", database=database, cwd=folder)
    key = herald_cli("key", "create", "--app", app, "--scope", "campaigns:write", "--scope", "events:write", database=database, cwd=folder).split()[-1]
    with herald_serve(folder, database) as server:
        def call(path, body):
            request = urllib.request.Request(server.base_url + path, data=json.dumps(body).encode(), method="POST",
                                             headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.loads(answer.read())
        campaign = call("/api/v1/campaigns", {"app": int(app), "name": "Spring", "triggers": [{"event": "app_launch"}],
                                              "message": {"layout": "modal", "title": {"text": "Hi"}}})["id"]
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        events = [{"id": str(uuid.uuid4()), "type": "impression", "campaignId": campaign, "occurredAt": now, "platform": "ios",
                   "installationId": f"i{n}"} for n in range(5)]
        events += [{"id": str(uuid.uuid4()), "type": "error", "campaignId": campaign, "occurredAt": now, "platform": "ios", "errorCode": code}
                   for code in ("image_fetch", "image_display", "image_format", "unspecified")]
        events += [{"id": str(uuid.uuid4()), "type": "dismiss", "campaignId": campaign, "occurredAt": now, "platform": "ios", "dismissType": kind}
                   for kind in ("auto", "click", "swipe", "unknown")]
        assert call("/api/v1/events", {"events": events})["accepted"] == len(events)
        yield {"server": server, "campaign": campaign}


@pytest.fixture(scope="module")
def signed_in(driver, day):
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.get(day["server"].url("/login"))
    visible(driver, "#field-email").send_keys(EMAIL)
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.ID, "field-password").send_keys(PASSWORD + Keys.ENTER)
    wait(driver).until(replaced(old), message="sign-in")
    yield day
    driver.set_window_size(1280, 900)
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})


OVERFLOWING = """
return Array.from(document.querySelectorAll('main .report-scroll, main .table-wrap, main .chart-frame'))
  .filter((frame) => frame.scrollWidth > frame.clientWidth)
  .map((frame) => (frame.closest('section') || frame).querySelector('h2, caption')?.textContent.trim() + ': ' + frame.scrollWidth + ' > ' + frame.clientWidth);
"""


@pytest.mark.parametrize("width", [1280, 1440])
def test_report_breakdowns_fit_and_its_dates_look_like_the_other_inputs(driver, signed_in, width):
    driver.set_window_size(width, 900)
    for path in (f"/campaigns/{signed_in['campaign']}/report", "/reports"):
        driver.get(signed_in["server"].url(path))
        visible(driver, "form.report-range")
        errors = driver.find_elements(By.ID, "errors-heading")
        assert path == "/reports" or errors, "the campaign's report shows display errors by code"
        assert driver.execute_script(OVERFLOWING) == [], f"{path} at {width} px"
        # Beside a text input put in the same place, as every other field of the console is drawn.
        styles = driver.execute_script(
            """const [ids, properties] = arguments;
               const text = Object.assign(document.createElement('input'), {type: 'text'});
               document.getElementById('range-from').after(text);
               const styles = [...ids.map((id) => document.getElementById(id)), text]
                 .map((input) => { const s = getComputedStyle(input); return properties.map((p) => s[p]); });
               text.remove();
               return styles;""",
            ["range-from", "range-to"], STYLE)
        assert styles[0] == styles[1] == styles[2], f"{path}: date inputs {styles[0]} unlike a text input {styles[2]}"


def test_a_language_version_the_script_adds_is_named_on_its_panel(driver, signed_in):
    driver.get(signed_in["server"].url("/campaigns/new"))
    form = visible(driver, "form[data-composer]")
    Select(driver.find_element(By.ID, "field-composer-language")).select_by_value("de")
    click(driver, driver.find_element(By.CSS_SELECTOR, "[data-version-add]"))
    panel = visible(driver, '[data-version-panel="de"]')
    remove = panel.find_element(By.CSS_SELECTOR, "[data-version-remove]")
    assert remove.text == "Remove the German (de) version"
    assert remove.get_attribute("data-confirm") == "Remove the German (de) version? Its texts are lost when you save."
    leftover = driver.execute_script(
        "return Array.from(arguments[0].querySelectorAll('*')).filter((e) => !e.closest('template'))"
        ".flatMap((e) => [e.childNodes.length ? Array.from(e.childNodes).filter((n) => n.nodeType === 3).map((n) => n.nodeValue).join('') : '',"
        " ...Array.from(e.attributes).map((a) => a.value)]).filter((t) => /LANGNAME|LANGTAG|LANGDIR/.test(t))", form)
    assert leftover == [], leftover
