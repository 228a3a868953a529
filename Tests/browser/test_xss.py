"""Script payloads everywhere a person or a device can type, in a real (headless) Chromium: nothing runs.

Every text field of every layout (titles, bodies, button texts, image and action addresses, colors),
the campaign's name and description, its custom data keys and values, trigger events and property
filters, targeting, the app's name, a test device and an API key's name, and what devices send as
events, are filled with payloads: element injection (<script>, <img onerror>, <svg onload>, <iframe
srcdoc>, <input autofocus onfocus>), attribute breakouts (">…, ' on…='), javascript: links,
</textarea>, </style> and </title> breakouts, template-looking text ({{…}}), text already escaped
(&lt;…) and right-to-left / astral text. The campaigns are saved (a failed publish that echoes the
input, a draft, then published), then every page that shows them is opened: the composer and its live
preview, the campaign's page, the edit form and an edit conflict, the preview page and its framed
document, the history, the campaign list, the reports and each campaign's report, the audit log, the
app's page, export and import, and pages that echo query parameters.

On every page, in the page and in every frame inside it, nothing ran and nothing was injected:
(a) no alert is open, (b) `window.__xss`, which the payloads set, stays undefined, (c) no element a
payload would create exists (ids `xss…`, `img[src=x]`, inline event handlers, inline scripts,
`javascript:` links, a `<style>` other than the preview's own), and (d) each payload is shown as text,
character for character, where the page displays it (or kept as an input's value). The browser's
console is also read for Content-Security-Policy violations: there must be none, since a blocked inline
script means markup got through; but the CSP is only a second line, and (c) and (d) are the proof.

The tests use their own server (a fresh database made with the CLI) and run in file order: one test
per layout composes its campaign; later tests post events, then read the pages that list them all.
"""

from __future__ import annotations

import json
import re
import urllib.request
import uuid
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote, urlencode, urlparse

import pytest
from browser_helpers import current_path, visible, wait
from selenium.common.exceptions import (
    NoAlertPresentException,
    TimeoutException,
    UnexpectedAlertPresentException,
    WebDriverException,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement

COMPOSER = "form[data-composer]"
ADMIN_EMAIL, ADMIN_PASSWORD = "xss-admin@example.com", "xss-passphrase-1"


def isolated(text: str) -> str:
    """User text inside a translated sentence, between the isolates (U+2068 … U+2069) that keep its direction apart."""
    return "\u2068" + text + "\u2069"


# --- payloads ------------------------------------------------------------------

# Each payload kind, given a tag, gives text that would run script (setting window.__xss, or raising an
# alert) or create an element with the id "xss<tag>" if a page put it in its markup unescaped.
KINDS = [
    lambda t: f'<script>window.__xss="{t}";alert(1)</script>',
    lambda t: f"<img src=x id=xss{t} onerror=window.__xss=1,alert(1)>",
    lambda t: f"<svg id=xss{t} onload=window.__xss=1,alert(1)>",
    lambda t: f'"><img src=x id=xss{t} onerror=alert(1)>',
    lambda t: f"' onmouseover='window.__xss=1' data-xss='{t}",
    lambda t: f"</textarea><img src=x id=xss{t} onerror=alert(1)>",
    lambda t: f"</style><svg id=xss{t} onload=alert(1)>",
    lambda t: f"</title><img src=x id=xss{t} onerror=alert(1)>",
    lambda t: f"<a id=xss{t} href=javascript:window.__xss=1>go</a>",
    lambda t: "{{T}} {{{T}}} {{&T}} {{#T}}x{{/T}} {{=<% %>=}} <%T%>".replace("T", t),
    lambda t: f"&lt;b id=xss{t}&gt; &#60;i&#62; &amp;amp;",
    lambda t: f"\u202eعرض <b id=xss{t}>ویژه</b>\u202c 𝒳🧨",
    lambda t: f'<iframe id=xss{t} srcdoc="<script>parent.__xss=1</script>"></iframe>',
    lambda t: f"<input autofocus id=xss{t} onfocus=window.__xss=1>",
]


def mix(tag: str, limit: int, start: int = 0) -> str:
    """Payload kinds in turn, from `start`, while they fit in `limit` characters (at least one)."""
    parts: list[str] = []
    for step in range(len(KINDS)):
        index = (start + step) % len(KINDS)
        part = KINDS[index](f"{tag}{index}")
        if len(" ".join(parts + [part])) <= limit:
            parts.append(part)
    assert parts, f"no payload fits in {limit} characters"
    return " ".join(parts)


# Elements no page of Herald has, and every injected payload would add. (The composer's words for its
# script are a JSON data block, `<script type="application/json">`, which browsers never run.)
INJECTED = ", ".join([
    '[id^="xss"]', "[data-xss]", 'img[src="x"]', "[onerror]", "[onload]", "[onmouseover]", "[onfocus]", "[onclick]",
    'script:not([src]):not([type="application/json"])', "iframe[srcdoc]", '[href^="javascript:" i]', '[src^="javascript:" i]',
])

# Runs in the page: every document (the page and its same-origin frames, recursively) is searched.
INSPECT = """
const expected = arguments[0], selector = arguments[1];
const report = {markers: [], injected: [], styles: [], unreadable: [], texts: {}, documents: 0};
const documents = [];
const visit = (win, where) => {
  let doc;
  try { doc = win.document; doc.documentElement; } catch (error) { report.unreadable.push(where); return; }
  report.documents += 1;
  documents.push(doc);
  if (win.__xss !== undefined) report.markers.push(where + ': ' + String(win.__xss));
  for (const element of doc.querySelectorAll(selector)) {
    report.injected.push(where + ': ' + element.outerHTML.slice(0, 160));
  }
  for (const style of doc.querySelectorAll('style')) {
    report.styles.push({where: where, nonce: style.hasAttribute('nonce'), text: style.textContent});
  }
  doc.querySelectorAll('iframe').forEach((frame, index) => {
    visit(frame.contentWindow, where + ' > iframe ' + (frame.name || frame.dataset.galleryFrame || index));
  });
};
visit(window, 'page');
for (const text of expected) {
  let state = 'missing';
  for (const doc of documents) {
    const walker = doc.createTreeWalker(doc.body || doc.documentElement, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.data.includes(text)) continue;
      const parent = node.parentElement;
      state = parent && parent.getClientRects().length > 0 ? 'visible' : 'hidden';
      if (state === 'visible') break;
    }
    if (state === 'visible') break;
  }
  report.texts[text] = state;
}
return report;
"""

# The only CSS the preview document generates: fixed selectors and validated colors.
GENERATED_CSS = re.compile(r"[.a-z0-9 \-{}:;#\n]*", re.IGNORECASE)


# --- what each layout's campaign holds ------------------------------------------

LAYOUTS = ["card", "modal", "image_only", "banner", "slideup", "fullscreen"]
CODES = {"card": "c", "modal": "m", "image_only": "i", "banner": "b", "slideup": "s", "fullscreen": "f"}
USES = {
    "card": {"title", "body", "imageUrl", "landscapeImageUrl", "backgroundColor", "primaryAction", "secondaryAction"},
    "modal": {"title", "body", "imageUrl", "backgroundColor", "primaryAction"},
    "image_only": {"imageUrl", "action"},
    "banner": {"title", "body", "imageUrl", "backgroundColor", "action", "dismiss"},
    "slideup": {"body", "imageUrl", "action", "dismiss"},
    "fullscreen": {"title", "body", "imageUrl", "backgroundColor", "primaryAction", "secondaryAction"},
}
COLOR_FIELDS = {
    "title": ["message.title.color"],
    "body": ["message.body.color"],
    "backgroundColor": ["message.backgroundColor"],
    "primaryAction": ["message.primaryAction.textColor", "message.primaryAction.buttonColor"],
    "secondaryAction": ["message.secondaryAction.textColor", "message.secondaryAction.buttonColor"],
}


def free_text(layout: str, round_: str) -> dict[str, str]:
    """Fields that take any text, so their payloads are saved and published as they are."""
    code = CODES[layout] + round_
    uses = USES[layout]
    offset = LAYOUTS.index(layout)
    values = {
        "name": mix(code + "n", 200, offset),
        "description": mix(code + "d", 2000, offset),
        "data.0.key": mix(code + "k", 100, offset + 3),
        "data.0.value": mix(code + "v", 1000, offset + 5),
        "data.1.key": KINDS[(offset + 9) % len(KINDS)](code + "K"),
        "data.1.value": mix(code + "V", 300, offset + 11),
        "triggers.0.filters.0.property": mix(code + "p", 40, offset + 2),
        "triggers.0.filters.0.value": mix(code + "q", 400, offset + 7),
        "targeting.appVersion.value": mix(code + "a", 100, offset + 4),  # CampaignLimits.appVersionRuleLength
        "targeting.userProperties.0.property": mix(code + "u", 40, offset + 6),
        "targeting.userProperties.0.value": mix(code + "w", 300, offset + 8),
    }
    if "title" in uses:
        values["message.title.text"] = mix(code + "t", 200, offset + 1)
    if "body" in uses:
        values["message.body.text"] = mix(code + "b", 1000, offset + 10)
    if "primaryAction" in uses:
        values["message.primaryAction.text"] = mix(code + "P", 60, offset + 1)
    if "secondaryAction" in uses:
        values["message.secondaryAction.text"] = mix(code + "S", 60, offset + 2)
    return values


def refused(layout: str) -> dict[str, str]:
    """Fields whose format is checked on every save: payloads there are refused and echoed back."""
    code = CODES[layout] + "r"
    uses = USES[layout]
    values = {
        "triggers.0.event": KINDS[1](code + "e"),
        "schedule.timeZone": KINDS[3](code + "z"),
        "schedule.start": KINDS[5](code + "st"),
        "frequency.days": KINDS[7](code + "fd"),
        # (lists are split at commas and spaces: these payloads have neither)
        "targeting.languages": "en, </textarea><svg/onload=window.__xss=1>",
        "targeting.countries": "US, \"><svg/onload=alert(1)>",
        "targeting.daysSinceFirstOpen.min": KINDS[4](code + "mn"),
        "targeting.percentage": KINDS[3](code + "pc"),
        "message.imageUrl": "javascript:alert(1)//" + KINDS[3](code + "iu"),
    }
    if "landscapeImageUrl" in uses:
        values["message.landscapeImageUrl"] = "https://x.example/" + KINDS[2](code + "lu")
    for field, names in COLOR_FIELDS.items():
        if field in uses:
            for number, name in enumerate(names):
                values[name] = "red;}</style>" + KINDS[1](f"{code}{field[:2]}{number}")
    if "primaryAction" in uses:
        values["message.primaryAction.url"] = "JaVaScRiPt:window.__xss=1//" + KINDS[3](code + "pu")
    if "secondaryAction" in uses:
        values["message.secondaryAction.url"] = "data:text/html,<script>alert(1)</script>"
    if "action" in uses:
        values["message.action.url"] = "javascript:alert(document.domain)"
    if "dismiss" in uses:
        values["message.dismiss.seconds"] = KINDS[1](code + "ds")
    return values


def accepted(layout: str) -> dict[str, str]:
    """Valid values for the refused fields; addresses still carry a quote breakout and 'javascript'."""
    code = CODES[layout]
    uses = USES[layout]
    # Port 9 is refused at once, so the preview's image fails fast without leaving the machine.
    values = {
        "triggers.0.event": "purchase",
        "schedule.timeZone": "Asia/Tehran",
        "schedule.start": "",
        "frequency.days": "3",
        "targeting.languages": "fa, en",
        "targeting.countries": "IR",
        "targeting.daysSinceFirstOpen.min": "1",
        "targeting.percentage": "50",
        "message.imageUrl": f"https://127.0.0.1:9/{code}.png?x='onerror='alert(1)'&javascript:alert(1)",
    }
    if "landscapeImageUrl" in uses:
        values["message.landscapeImageUrl"] = f"https://127.0.0.1:9/{code}-wide.png?'onload='alert(1)"
    for field, names in COLOR_FIELDS.items():
        if field in uses:
            for number, name in enumerate(names):
                values[name] = ["#CC1A73E8", "#FFFFFF"][number]
    if "primaryAction" in uses:
        values["message.primaryAction.url"] = f"myapp://offers/{code}?q='onmouseover='alert(1)'"
    if "secondaryAction" in uses:
        values["message.secondaryAction.url"] = f"https://127.0.0.1:9/later?'onfocus='alert(1)'"
    if "action" in uses:
        values["message.action.url"] = f"myapp://tap/{code}?javascript:alert(1)'onclick='x"
    if "dismiss" in uses:
        values["message.dismiss.seconds"] = "9"
    return values


def edited(layout: str) -> dict[str, str]:
    """The second revision: new payloads in the name, texts and a data value, so the history shows both."""
    code = CODES[layout] + "e"
    values = {
        "name": mix(code + "n", 200, 4),
        "data.0.value": mix(code + "v", 500, 9),
    }
    uses = USES[layout]
    if "title" in uses:
        values["message.title.text"] = mix(code + "t", 200, 6)
    if "body" in uses:
        values["message.body.text"] = mix(code + "b", 600, 2)
    if "primaryAction" in uses:
        values["message.primaryAction.text"] = mix(code + "P", 60, 11)
    if "action" in uses:
        values["message.action.url"] = f"myapp://tap/{code}/2?'onmouseover='alert(2)'"
    return values


# The app, a test device and an API key, made with the CLI before the server starts.
APP_NAME = "Shop <img src=x id=xssapp onerror=alert(1)> \u202eعربي\u202c"
DEVICE_NAME = "\"><svg id=xssdev onload=alert(1)> Sara's iPhone"
DEVICE_INSTALLATION = "</textarea><img src=x id=xssinst onerror=alert(1)>"
KEY_NAME = "<script>alert(1)</script> {{key}}"

# What one test leaves for the next (they run in file order).
journey: dict[str, dict] = {"campaigns": {}}


# --- helpers -----------------------------------------------------------------

def submit_with(driver: WebDriver, element: WebElement) -> None:
    """Click a submit button and wait until the next document has loaded in its place."""
    before = loaded_document(driver)
    # Clicked by script, and the new page told by its time origin rather than by a stale element:
    # while the composer swaps its preview frame, chromedriver can lose a native click's target or
    # fail to resolve an old element ("Node with given id does not belong to the document").
    driver.execute_script("arguments[0].click()", element)
    wait(driver).until(
        lambda d: loaded_document(d) not in (None, before),
        message="the form was not submitted (or an alert is holding the page)",
    )


def loaded_document(driver: WebDriver) -> float | None:
    """The current document's time origin once it has loaded; None while loading or navigating."""
    try:
        return driver.execute_script("return document.readyState === 'complete' ? performance.timeOrigin : null")
    except UnexpectedAlertPresentException as error:
        pytest.fail(f"an alert opened ({error.alert_text!r})")
    except WebDriverException:
        return None


def intent_button(driver: WebDriver, intent: str) -> WebElement:
    return driver.find_element(By.CSS_SELECTOR, f'{COMPOSER} button[name="intent"][value="{intent}"]')


def open_page(driver: WebDriver, url: str) -> None:
    driver.get(url)
    wait(driver).until(lambda d: d.execute_script("return document.readyState") == "complete")


def csp_violations(driver: WebDriver) -> list[str]:
    """The browser's console messages since the last call that report a Content-Security-Policy violation."""
    return [
        entry["message"] for entry in driver.get_log("browser")
        if "Content Security Policy" in entry["message"] or "Content-Security-Policy" in entry["message"]
    ]


def assert_nothing_ran(driver: WebDriver, label: str, shown: list[str] = ()) -> dict:
    """(a)–(d) on the current page and every frame in it; returns the inspection for further checks."""
    try:
        alert = driver.switch_to.alert
        text = alert.text
        alert.dismiss()
        pytest.fail(f"{label}: an alert opened ({text!r})")
    except NoAlertPresentException:
        pass
    report = driver.execute_script(INSPECT, list(shown), INJECTED)
    assert not report["unreadable"], f"{label}: frames that could not be inspected: {report['unreadable']}"
    assert not report["markers"], f"{label}: a payload ran: window.__xss is set in {report['markers']}"
    assert not report["injected"], f"{label}: payload elements were injected: {report['injected']}"
    for style in report["styles"]:
        # Only the preview document has a <style>: the nonce'd one with generated color rules.
        assert style["nonce"] and GENERATED_CSS.fullmatch(style["text"]), f"{label}: an unexpected <style>: {style}"
    not_shown = {text: state for text, state in report["texts"].items() if state != "visible"}
    assert not not_shown, f"{label}: payloads not shown as text: " + "; ".join(
        f"{state}: {text!r}" for text, state in not_shown.items())
    violations = csp_violations(driver)
    assert not violations, f"{label}: the Content-Security-Policy blocked something (markup got through): {violations}"
    return report


def set_fields(driver: WebDriver, values: dict[str, str]) -> None:
    """Put values into the composer's inputs as a person (or a forged request) could, without the browser's checks."""
    missing = driver.execute_script(
        """
        const form = document.querySelector(arguments[1]);
        const missing = [];
        for (const [name, value] of Object.entries(arguments[0])) {
          const field = form.querySelector(`[name="${CSS.escape(name)}"]:not([type=radio])`);
          if (!field) { missing.push(name); continue; }
          if (field.tagName === 'SELECT') {
            if (![...field.options].some((option) => option.value === value)) field.add(new Option(value, value));
          } else if (field.type !== 'text' && field.type !== 'url' && field.type !== 'search') {
            field.type = 'text';  // a number or date input would drop text; a forged request would not
          }
          field.value = value;
        }
        return missing;
        """,
        values, COMPOSER,
    )
    assert not missing, f"the composer has no fields {missing}"


def choose(driver: WebDriver, name: str, value: str) -> None:
    radio = driver.find_element(By.CSS_SELECTOR, f'{COMPOSER} input[name="{name}"][value="{value}"]')
    driver.execute_script("arguments[0].click()", radio)


def add_row(driver: WebDriver, rows: str) -> None:
    before = len(driver.find_elements(By.CSS_SELECTOR, f'[data-rows="{rows}"] > [data-row]'))
    button = driver.find_element(By.CSS_SELECTOR, f'[data-row-add="{rows}"]')
    driver.execute_script("arguments[0].click()", button)
    wait(driver).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, f'[data-rows="{rows}"] > [data-row]')) == before + 1,
        message=f"no row was added to {rows}",
    )


def field_values(driver: WebDriver, names: list[str]) -> dict[str, str | None]:
    """The value attribute of each named input as the server wrote it (an input's text, attribute-escaped)."""
    return driver.execute_script(
        """
        const result = {};
        for (const name of arguments[0]) {
          const field = document.querySelector(`${arguments[1]} [name="${CSS.escape(name)}"]`);
          result[name] = field ? (field.tagName === 'SELECT' ? field.value : field.getAttribute('value')) : null;
        }
        return result;
        """,
        names, COMPOSER,
    )


def assert_fields_hold(driver: WebDriver, values: dict[str, str], label: str) -> None:
    held = field_values(driver, list(values))
    wrong = {name: (held[name], value) for name, value in values.items() if held[name] != value}
    assert not wrong, f"{label}: inputs do not hold what was typed (got, expected): {wrong}"


def frame_state(driver: WebDriver, css: str = 'iframe[name="preview"]') -> dict | None:
    """What the (same-origin) preview frame draws, once it has loaded and no newer one is on its way."""
    return driver.execute_script(
        """
        if (document.querySelector('iframe.preview-iframe-pending')) return null;
        const frame = document.querySelector(arguments[0]);
        const doc = frame && frame.contentDocument;
        if (!doc || doc.readyState !== 'complete' || doc.URL === 'about:blank') return null;
        const text = (css) => { const e = doc.querySelector(css); return e ? e.textContent : null; };
        const message = doc.querySelector('[data-message]');
        return {
          layout: message ? message.dataset.layout : null,
          title: text('[data-title]'),
          body: text('[data-body]'),
          buttons: Object.fromEntries([...doc.querySelectorAll('[data-button]')].map((b) => [b.dataset.button, {text: b.textContent, title: b.title, href: b.dataset.href}])),
          images: [...doc.querySelectorAll('img.m-img')].map((img) => img.getAttribute('src')),
          tapHint: message ? message.getAttribute('title') : null,
          problems: text('[data-problems]'),
        };
        """,
        css,
    )


def expected_drawing(layout: str, values: dict[str, str]) -> dict:
    """What the preview must draw of `values`: texts verbatim, buttons by role."""
    drawing = {"layout": layout}
    if layout not in ("image_only", "slideup"):
        drawing["title"] = values["message.title.text"]
    if layout != "image_only":
        drawing["body"] = values["message.body.text"]
    buttons = {}
    if layout in ("card", "fullscreen"):
        buttons["secondary"] = values["message.secondaryAction.text"]
    if layout in ("card", "modal", "fullscreen"):
        buttons["primary"] = values["message.primaryAction.text"]
    drawing["buttons"] = buttons
    return drawing


def matches(state: dict | None, drawing: dict) -> bool:
    if not state or state["layout"] != drawing["layout"]:
        return False
    if any(state[part] != drawing[part] for part in ("title", "body") if part in drawing):
        return False
    return {role: b["text"] for role, b in state["buttons"].items()} == drawing["buttons"]


def wait_for_drawing(driver: WebDriver, drawing: dict, label: str, css: str = 'iframe[name="preview"]') -> dict:
    try:
        wait(driver).until(lambda d: matches(frame_state(d, css), drawing))
    except TimeoutException:
        # Say why: most likely markup got into the frame (this fails with what was injected).
        assert_nothing_ran(driver, f"{label} (preview)")
        raise AssertionError(f"{label}: the preview did not draw the payloads as text: it shows {frame_state(driver, css)}")
    return frame_state(driver, css)


def text_of(driver: WebDriver, css: str) -> str | None:
    """An element's text exactly as the document holds it (no rendering rules applied)."""
    return driver.execute_script("const e = document.querySelector(arguments[0]); return e && e.textContent.trim()", css)


def cookie_header(driver: WebDriver) -> str:
    return "; ".join(f"{c['name']}={c['value']}" for c in driver.get_cookies())


def fetch(driver: WebDriver, url: str):
    """GET with the browser's session, for downloads the browser would save rather than show."""
    request = urllib.request.Request(url, headers={"Cookie": cookie_header(driver)})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.headers, response.read()


# --- the server ------------------------------------------------------------------

@pytest.fixture(scope="module")
def xss_herald(tmp_path_factory, herald_cli, herald_serve):
    """A fresh instance whose app, test device and API key carry payloads, with an events:write key."""
    workdir = tmp_path_factory.mktemp("herald-xss")
    database = workdir / "herald.sqlite"
    herald_cli("user", "create", "--email", ADMIN_EMAIL, "--role", "admin", "--password-stdin",
               database=database, cwd=workdir, stdin=ADMIN_PASSWORD + "\n")
    app_id = herald_cli("app", "create", "--name", APP_NAME, "--platform", "ios", "--platform", "android",
                        database=database, cwd=workdir).split()[-1]
    key = herald_cli("key", "create", "--app", app_id, "--name", KEY_NAME, "--scope", "events:write",
                     database=database, cwd=workdir).split()[-1]
    herald_cli("device", "add", "--app", app_id, "--installation", DEVICE_INSTALLATION, "--name", DEVICE_NAME,
               database=database, cwd=workdir)
    with herald_serve(workdir, database) as server:
        yield {"server": server, "app": app_id, "key": key, "workdir": workdir}


@pytest.fixture(scope="module")
def signed_in(driver, xss_herald):
    # Every test server lives on 127.0.0.1, where cookies ignore the port: start and end clean.
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    server = xss_herald["server"]
    open_page(driver, server.url("/login"))
    driver.find_element(By.ID, "field-email").send_keys(ADMIN_EMAIL)
    driver.find_element(By.ID, "field-password").send_keys(ADMIN_PASSWORD)
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, 'form[action="/login"] button[type="submit"]'))
    wait(driver).until(lambda d: current_path(d) == "/campaigns", message="sign-in failed")
    yield server
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})


@pytest.fixture(autouse=True)
def fresh_console(driver):
    """Each test reads only its own console messages (a failed one leaves its pages' messages behind)."""
    driver.get_log("browser")


# --- one campaign per layout ----------------------------------------------------

@pytest.mark.parametrize("layout", LAYOUTS)
def test_payloads_in_every_field_of_a_layout_never_run(driver, signed_in, xss_herald, layout):
    server = signed_in
    text = free_text(layout, "")
    bad = refused(layout)
    good = accepted(layout)

    # Given the composer with this layout, a second data pair, a trigger filter and a user property row
    open_page(driver, server.url("/campaigns/new"))
    visible(driver, COMPOSER)
    choose(driver, "message.layout", layout)
    add_row(driver, "data")
    add_row(driver, "triggers.0.filters")
    add_row(driver, "targeting.userProperties")

    # When every field holds a payload, refused formats included, with a start date and every-N-days frequency
    choose(driver, "schedule.startMode", "at")
    choose(driver, "frequency.type", "every_n_days")
    set_fields(driver, {**text, **bad, "triggers.0.filters.0.op": "eq", "triggers.0.filters.0.type": "string",
                        "targeting.userProperties.0.op": "contains", "targeting.userProperties.0.type": "string"})

    # Then the live preview draws the texts as text, and lists the problems without running anything
    driver.execute_script("arguments[0].click()", driver.find_element(By.CSS_SELECTOR, "[data-preview-submit]"))
    drawing = wait_for_drawing(driver, expected_drawing(layout, text), f"{layout} composer")
    assert drawing["problems"], f"{layout}: the preview lists no problem for refused colors and addresses"
    assert drawing["images"] == [], f"{layout}: the preview loads a refused image address: {drawing['images']}"
    assert_nothing_ran(driver, f"{layout} composer", [])

    # When they publish
    submit_with(driver, intent_button(driver, "publish"))

    # Then nothing is saved; the form comes back with every payload kept exactly, and the errors echo them as text
    assert current_path(driver) == "/campaigns", f"{layout}: a campaign with refused fields was saved"
    summary = visible(driver, ".error-summary")
    problems = [li.text for li in summary.find_elements(By.TAG_NAME, "li")]
    assert len(problems) >= len(bad) - 2, f"{layout}: too few problems listed: {problems}"
    assert_fields_hold(driver, {**text, **bad}, f"{layout} after a failed publish")
    echoed = [
        bad["schedule.timeZone"],
        bad["targeting.languages"].split(", ")[1],
        bad["targeting.countries"].split(", ")[1],
    ]
    assert_nothing_ran(driver, f"{layout} failed publish", echoed)
    wait_for_drawing(driver, expected_drawing(layout, text), f"{layout} failed publish")
    assert_nothing_ran(driver, f"{layout} failed publish, redrawn preview")

    # When they make the formats valid (the addresses keep a quote breakout) and save a draft
    choose(driver, "schedule.startMode", "publish")
    set_fields(driver, good)
    submit_with(driver, intent_button(driver, "draft"))

    # Then the campaign's page shows every payload as text, the flash message included
    wait(driver).until(lambda d: re.fullmatch(r"/campaigns/\d+", current_path(d)), message=f"{layout}: not saved")
    page = current_path(driver)
    shown_on_summary = [value for name, value in text.items() if not name.endswith((".op", ".type"))]
    shown_on_summary += [good["message.imageUrl"], APP_NAME]
    for name in ("message.primaryAction.url", "message.secondaryAction.url", "message.action.url", "message.landscapeImageUrl"):
        if name in good:
            shown_on_summary.append(good[name])
    assert_nothing_ran(driver, f"{layout} draft page", shown_on_summary)
    assert driver.find_element(By.CSS_SELECTOR, ".lead .badge").text == "Draft"
    assert text_of(driver, ".flash") == f"“{isolated(text['name'])}” is saved as a draft."
    assert text_of(driver, "h1") == text["name"]
    assert driver.title == f"{text['name']} · Herald"

    if layout == "card":
        # And a draft's delete confirmation names it as text
        open_page(driver, server.url(page + "/delete"))
        assert_nothing_ran(driver, f"{layout} delete confirmation", [text["name"]])

    # When they edit it: every input holds the saved payload exactly
    open_page(driver, server.url(page + "/edit"))
    visible(driver, COMPOSER)
    saved = {**text, **good}
    assert_fields_hold(driver, {k: v for k, v in saved.items() if k != "schedule.start"}, f"{layout} edit form")
    assert_nothing_ran(driver, f"{layout} edit form")
    wait_for_drawing(driver, expected_drawing(layout, text), f"{layout} edit form")
    assert_nothing_ran(driver, f"{layout} edit form with its preview")

    # And change the name, texts and a data value to new payloads, and publish
    second = edited(layout)
    set_fields(driver, second)
    submit_with(driver, intent_button(driver, "publish"))
    wait(driver).until(lambda d: current_path(d) == page, message=f"{layout}: not published")
    final = {**saved, **second}
    assert driver.find_element(By.CSS_SELECTOR, ".lead .badge").text == "Running", f"{layout}: not running"
    assert_nothing_ran(driver, f"{layout} published page",
                       [value for name, value in second.items()] + [f"“{isolated(final['name'])}” is published."])

    # Then its preview page and framed document draw the payloads as text, and addresses stay in attributes
    open_page(driver, server.url(page + "/preview"))
    drawing = wait_for_drawing(driver, expected_drawing(layout, final), f"{layout} preview page")
    assert drawing["images"] == [final["message.imageUrl"]], f"{layout}: the image address changed: {drawing['images']}"
    for role in drawing["buttons"]:
        url = final[f"message.{role}Action.url"]
        assert drawing["buttons"][role]["title"] == f"Opens {url}" and drawing["buttons"][role]["href"] == url
    if "action" in USES[layout]:
        assert drawing["tapHint"] == f"Tapping the message opens {final['message.action.url']}"
    assert_nothing_ran(driver, f"{layout} preview page", [final["name"]])
    open_page(driver, server.url(page + "/preview/frame?theme=dark&orientation=landscape"))
    assert_nothing_ran(driver, f"{layout} preview frame, alone",
                       [v for k, v in final.items() if k in ("message.title.text", "message.body.text")])

    # And the history shows both versions of every changed payload as text
    open_page(driver, server.url(page + "/history"))
    changed = [v for k, v in second.items() if k != "message.action.url"]
    before = [saved[k] for k in second if k != "message.action.url"]
    assert_nothing_ran(driver, f"{layout} history", changed + before + [final["name"]])

    # And an edit made on top of the older version shows the conflict's changes as text
    open_page(driver, server.url(page + "/edit"))
    visible(driver, COMPOSER)
    driver.execute_script(f"document.querySelector('{COMPOSER} [name=revision]').value = '1'")
    submit_with(driver, intent_button(driver, "draft"))
    visible(driver, "#conflict")
    assert_nothing_ran(driver, f"{layout} edit conflict", changed + before)

    journey["campaigns"][layout] = {"id": int(page.rsplit("/", 1)[1]), "values": final}


# --- pages that list every campaign ----------------------------------------------

def post_events(server, key: str, events: list[dict]) -> dict:
    request = urllib.request.Request(
        server.url("/api/v1/events"), data=json.dumps({"events": events}).encode(), method="POST",
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_reports_show_payload_names_as_text(driver, signed_in, xss_herald):
    campaigns = journey["campaigns"]
    if len(campaigns) != len(LAYOUTS):
        pytest.skip("not every layout's campaign was saved")
    server = signed_in

    # Given devices reported impressions, clicks (with a payload address), dismissals, errors and conversions
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    events = []
    for number, layout in enumerate(LAYOUTS):
        campaign = campaigns[layout]["id"]
        base = {"campaignId": campaign, "occurredAt": now, "platform": ["ios", "android"][number % 2],
                "installationId": f"<img src=x id=xssdevice{number} onerror=alert(1)>"}
        events += [{**base, "id": str(uuid.uuid4()), "type": "impression"} for _ in range(number + 2)]
        events += [
            {**base, "id": str(uuid.uuid4()), "type": "click", "action": "primary",
             "url": "javascript:alert(1)//\"><svg id=xssclick onload=alert(1)>"},
            {**base, "id": str(uuid.uuid4()), "type": "dismiss", "dismissType": "swipe"},
            {**base, "id": str(uuid.uuid4()), "type": "error", "errorCode": "image_fetch"},
            {**base, "id": str(uuid.uuid4()), "type": "conversion", "event": "purchase"},
            # Refused: conversions name an event ID, never markup
            {**base, "id": str(uuid.uuid4()), "type": "conversion", "event": "<svg id=xssconv onload=alert(1)>"},
        ]
    answer = post_events(server, xss_herald["key"], events)
    assert answer["accepted"] == len(events) - len(LAYOUTS) and len(answer["rejected"]) == len(LAYOUTS), answer

    # When the reports list opens, then every campaign is listed by its payload name, as text
    names = [campaigns[layout]["values"]["name"] for layout in LAYOUTS]
    open_page(driver, server.url("/reports"))
    report = assert_nothing_ran(driver, "reports", names + [APP_NAME])
    assert report["documents"] == 1
    assert len(driver.find_elements(By.CSS_SELECTOR, "table.report-table tbody tr")) == len(LAYOUTS)
    open_page(driver, server.url("/reports?sort=name&dir=desc&app=" + xss_herald["app"]))
    assert_nothing_ran(driver, "reports of the app, by name", names + [APP_NAME])

    # And each campaign's report shows its name and app as text, with its figures and its chart
    for layout in LAYOUTS:
        campaign = campaigns[layout]
        open_page(driver, server.url(f"/campaigns/{campaign['id']}/report"))
        assert_nothing_ran(driver, f"{layout} report", [campaign["values"]["name"], APP_NAME])
        assert driver.title == f"Report: {isolated(campaign['values']['name'])} · Herald"
        assert driver.find_elements(By.CSS_SELECTOR, "svg.report-chart .chart-bar"), f"{layout}: no chart drawn"
        figures = driver.execute_script(
            "return Object.fromEntries([...document.querySelectorAll('.report-totals .metric')]"
            ".map((m) => [m.querySelector('dt').textContent, m.querySelector('.metric-value').textContent]))")
        assert figures["Impressions"] == str(LAYOUTS.index(layout) + 2) and figures["Conversions"] == "1", figures

    # And the CSV download is a download of figures, never a page
    status, headers, body = fetch(driver, server.url(f"/campaigns/{campaigns['card']['id']}/report.csv"))
    assert status == 200 and headers["Content-Type"].startswith("text/csv")
    assert headers["Content-Disposition"].startswith("attachment;") and headers["X-Content-Type-Options"] == "nosniff"
    assert b"<" not in body


def test_lists_audit_log_and_app_page_show_payloads_as_text(driver, signed_in, xss_herald):
    campaigns = journey["campaigns"]
    if not campaigns:
        pytest.skip("no campaign was saved")
    server = signed_in
    names = [campaign["values"]["name"] for campaign in campaigns.values()]

    # The campaign list, all of them on one page, and filtered by a payload name
    open_page(driver, server.url("/campaigns"))
    assert_nothing_ran(driver, "campaign list", names + [APP_NAME])
    search = names[0][:30].strip()
    open_page(driver, server.url("/campaigns?" + urlencode({"q": search, "sort": "name"})))
    assert_nothing_ran(driver, "campaign list filtered by a payload", [names[0]])
    assert driver.find_element(By.ID, "filter-q").get_dom_attribute("value") == search

    # The audit log, which names the app and each campaign
    open_page(driver, server.url("/audit"))
    assert_nothing_ran(driver, "audit log", [APP_NAME])

    # The app's page: its name, test device and API key name
    open_page(driver, server.url("/apps"))
    assert_nothing_ran(driver, "apps", [APP_NAME])
    open_page(driver, server.url(f"/apps/{xss_herald['app']}"))
    assert_nothing_ran(driver, "app page", [APP_NAME, DEVICE_NAME, DEVICE_INSTALLATION, KEY_NAME])


def test_export_and_import_keep_payloads_as_data(driver, signed_in, xss_herald, tmp_path):
    campaigns = journey["campaigns"]
    if "card" not in campaigns:
        pytest.skip("the card campaign was not saved")
    server = signed_in
    card = campaigns["card"]

    # The JSON export is a download with the payloads as JSON strings, never a page
    status, headers, body = fetch(driver, server.url(f"/campaigns/{card['id']}/export"))
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert headers["Content-Disposition"].startswith("attachment;") and headers["X-Content-Type-Options"] == "nosniff"
    exported = json.loads(body)
    assert exported["campaigns"][0]["name"] == card["values"]["name"]
    assert exported["campaigns"][0]["message"]["title"]["text"] == card["values"]["message.title.text"]
    status, headers, body = fetch(driver, server.url("/campaigns/export?" + urlencode({"q": "<script>"})))
    assert status == 200 and headers["Content-Type"] == "application/json"

    # An import check lists the campaigns it would create by their payload names, as text
    good_file = tmp_path / "campaigns.json"
    good_file.write_text(json.dumps(exported))
    import_file(driver, server, good_file)
    assert_nothing_ran(driver, "import check", [card["values"]["name"]])
    assert "Ready to import" in driver.find_element(By.ID, "import-result").text

    # A file with payloads where formats are checked is refused, and its problems echo them as text
    broken = json.loads(json.dumps(exported))
    campaign = broken["campaigns"][0]
    campaign["targeting"]["languages"] = ['"><svg id=xssimportlang onload=alert(1)>']
    campaign["schedule"]["timeZone"] = "</textarea><img src=x id=xssimporttz onerror=alert(1)>"
    campaign["data"] = [{"key": "<b id=xssdup>k</b>", "value": "1"}, {"key": "<b id=xssdup>k</b>", "value": "2"}]
    bad_file = tmp_path / "broken.json"
    bad_file.write_text(json.dumps(broken))
    import_file(driver, server, bad_file)
    assert_nothing_ran(driver, "import refused", [
        card["values"]["name"], campaign["targeting"]["languages"][0], campaign["schedule"]["timeZone"],
        f"The key “{isolated('<b id=xssdup>k</b>')}” is used twice",
    ])

    # And a file that is not JSON at all is refused without echoing markup into the page
    not_json = tmp_path / "page.json"
    not_json.write_text("<html><script>window.__xss=1</script><img src=x id=xssnotjson onerror=alert(1)>")
    import_file(driver, server, not_json)
    assert_nothing_ran(driver, "import of a non-JSON file")


def import_file(driver: WebDriver, server, path: Path) -> None:
    open_page(driver, server.url("/campaigns/import"))
    driver.find_element(By.ID, "field-file").send_keys(str(path))
    dry_run = driver.find_element(By.ID, "field-dryRun")
    if not dry_run.is_selected():
        driver.execute_script("arguments[0].click()", dry_run)
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, 'form[action="/campaigns/import"] button[type="submit"]'))


# --- payloads in the address ------------------------------------------------------

REFLECTED = "\"><img src=x id=xssquery onerror=alert(1)>'</textarea></style></title><script>alert(1)</script>"


def test_query_parameters_are_shown_as_text(driver, signed_in):
    campaigns = journey["campaigns"]
    server = signed_in
    card = campaigns.get("card", {}).get("id", 1)

    # The campaign list's filters echo a search, and ignore unknown states and apps
    open_page(driver, server.url("/campaigns?" + urlencode({"q": REFLECTED, "status": REFLECTED, "app": REFLECTED, "sort": REFLECTED, "page": REFLECTED})))
    assert_nothing_ran(driver, "campaign list with payload filters")
    assert driver.find_element(By.ID, "filter-q").get_dom_attribute("value") == REFLECTED

    # Report ranges echo what was typed in the error and the inputs
    open_page(driver, server.url("/reports?" + urlencode({"from": REFLECTED, "to": REFLECTED, "sort": REFLECTED, "dir": REFLECTED, "app": REFLECTED})))
    assert_nothing_ran(driver, "reports with a payload range", [f"The start date “{isolated(REFLECTED)}” is not a date"])
    assert driver.find_element(By.ID, "range-from").get_dom_attribute("value") == REFLECTED
    open_page(driver, server.url(f"/campaigns/{card}/report?" + urlencode({"from": "2026-01-01", "to": REFLECTED})))
    assert_nothing_ran(driver, "campaign report with a payload range", [f"The end date “{isolated(REFLECTED)}” is not a date"])

    # The preview pages ignore what they do not know
    open_page(driver, server.url("/preview/gallery?" + urlencode({"device": REFLECTED, "orientation": REFLECTED, "theme": REFLECTED, "lang": REFLECTED})))
    for frame in driver.find_elements(By.CSS_SELECTOR, "iframe[data-gallery-frame]"):
        driver.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'})", frame)
    wait(driver).until(lambda d: d.execute_script(
        "return [...document.querySelectorAll('iframe[data-gallery-frame]')].every((f) => f.contentDocument"
        " && f.contentDocument.readyState === 'complete' && f.contentDocument.querySelector('[data-message]'))"),
        message="the gallery's frames did not load")
    assert_nothing_ran(driver, "gallery with payload switches")
    open_page(driver, server.url("/preview/gallery/frame?" + urlencode({"layout": REFLECTED})))
    assert_nothing_ran(driver, "gallery frame of a payload layout")
    open_page(driver, server.url(f"/campaigns/{card}/preview?" + urlencode({"device": REFLECTED, "theme": REFLECTED})))
    assert_nothing_ran(driver, "preview page with payload switches")

    # Pages that do not exist, and the audit log's pages
    open_page(driver, server.url("/campaigns/" + quote(REFLECTED, safe="")))
    assert_nothing_ran(driver, "a campaign address with a payload")
    open_page(driver, server.url("/audit?page=" + quote(REFLECTED, safe="")))
    assert_nothing_ran(driver, "audit log with a payload page")

    # A signed-in visit to the sign-in page goes on to `next` only when it is a path of this site
    for next_path in ("javascript:alert(1)", "/\t/example.invalid/", "/\n/example.invalid/"):
        try:
            driver.get(server.url("/login?" + urlencode({"next": next_path})))
        except WebDriverException as error:  # the browser tried another host, which does not resolve
            pytest.fail(f"next={next_path!r} led off-site, to {driver.current_url}: {error.msg}")
        assert urlparse(driver.current_url).netloc == urlparse(server.base_url).netloc, (
            f"next={next_path!r} led off-site, to {driver.current_url}")
        assert current_path(driver) == "/campaigns", f"next={next_path!r} led to {driver.current_url}"
        assert_nothing_ran(driver, f"sign-in page with next={next_path!r}")

    # Signed out, the sign-in page keeps a payload `next` as the form's value, and signing in stays on this site
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    open_page(driver, server.url("/login?" + urlencode({"next": "/" + REFLECTED})))
    assert_nothing_ran(driver, "sign-in page with a payload next")
    assert driver.find_element(By.CSS_SELECTOR, 'input[name="next"]').get_dom_attribute("value") == "/" + REFLECTED
    open_page(driver, server.url("/login?" + urlencode({"next": "/\t/example.invalid/"})))
    driver.find_element(By.ID, "field-email").send_keys(ADMIN_EMAIL)
    driver.find_element(By.ID, "field-password").send_keys(ADMIN_PASSWORD)
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, 'form[action="/login"] button[type="submit"]'))
    assert urlparse(driver.current_url).netloc == urlparse(server.base_url).netloc, (
        f"signing in led off-site, to {driver.current_url}")
    assert current_path(driver) == "/campaigns"
