"""The console in each of its languages, in a real (headless) Chromium: mirrored, translated, fitting and accessible.

One seeded server (an admin per language, the app "Ẓshop" with a web origin, a published campaign with
English, Persian, Arabic, German and Japanese versions of its message, and events) is surveyed once: for
each language the campaign list, the composer (new and edit), the campaign page, its report, the settings
page and the app's page are loaded at 1440 and 390 px wide. The tests then read the survey, one aspect each, and list every problem
they find at once:

* ``<html lang dir>``: the user's language, right-to-left for Persian and Arabic;
* no horizontal overflow: the page is no wider than the window, and no element sticks out of it;
* no English left: no visible text is an English string of ``Locales/en.json`` that the language's
  catalog translates, and no visible word is English (for German: a word of en.json that no other catalog
  uses; for Persian, Arabic and Japanese: any run of 4 or more ASCII letters), user data and a short
  allow-list aside;
* axe-core finds no serious or critical violation;
* full-page screenshots of the composer and the report in each language at both widths, in
  ``test-artifacts/screenshots/<lang>-<page>-<width>.png``, for people to look at.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.request
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from browser_helpers import AXE_RUN_JS, axe_source, current_path, replaced, visible, wait
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

REPO_ROOT = Path(__file__).resolve().parents[2]
LOCALES = REPO_ROOT / "Locales"
SCREENSHOTS = REPO_ROOT / "test-artifacts" / "screenshots"

LANGUAGES = ["en", "de", "fa", "ar", "ja"]
RIGHT_TO_LEFT = {"fa", "ar"}
WIDTHS = [1440, 390]
PASSWORD = "localized-passphrase-1"
SCREENSHOT_PAGES = {"composer", "report"}

# Everything the test seeds that a page may show: user data, not UI text.
APP_NAME = "Ẓshop"
CAMPAIGN_NAME = "Ẓspring"
DEFAULT_TITLE = "Spring sale"
DEFAULT_BODY = "20% off everything in the store until Sunday."
VERSIONS = {
    "en": {"title": {"text": "Spring sale"}, "body": {"text": "20% off everything in the store until Sunday."},
           "primaryAction": {"text": "Shop now"}},
    "fa": {"title": {"text": "حراج بهاره"}, "body": {"text": "۲۰٪ تخفیف روی همه‌چیز فروشگاه تا یکشنبه."},
           "primaryAction": {"text": "خرید کنید"}, "secondaryAction": {"text": "بعداً"}},
    "ar": {"title": {"text": "تخفيضات الربيع"}, "body": {"text": "خصم ٢٠٪ على كل شيء في المتجر حتى الأحد."},
           "primaryAction": {"text": "تسوّق الآن"}, "secondaryAction": {"text": "لاحقًا"}},
    "de": {"title": {"text": "Frühjahrsangebot"}, "body": {"text": "20 % Rabatt auf alles im Shop bis Sonntag."},
           "primaryAction": {"text": "Jetzt einkaufen"}, "secondaryAction": {"text": "Später"}},
    "ja": {"title": {"text": "春のセール"}, "body": {"text": "日曜日まで全品20％オフ。"},
           "primaryAction": {"text": "今すぐ購入"}, "secondaryAction": {"text": "あとで"}},
}
USER_DATA = [
    APP_NAME, CAMPAIGN_NAME, DEFAULT_TITLE, DEFAULT_BODY, "Shop now", "Not now", "Ẓdescription", "zq_purchase", "zq_level",
    "zq_sku", "Ẓsku", "Ẓpromo", "Ẓcode", "Ẓmain",
    *(text for version in VERSIONS.values() for part in version.values() for text in part.values()),
]

# Words every language writes in Latin letters: the product, platforms and protocols, and each language's
# own name in the language chooser (so anyone finds theirs).
ALLOWED_WORDS = {
    "Herald", "iOS", "Android", "JSON", "CSV", "API", "URL", "URLs", "APNs", "FCM", "HTTP", "HTTPS", "UTC", "GMT",
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "English", "Deutsch", "localhost",
    # The push providers' companies and products, as their consoles name them.
    "Apple", "Google", "Firebase",
}
# Things that are not words of a language: links, addresses, ISO dates, time zone names, colors, BCP 47 tags.
NOT_WORDS = [
    re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>]*"),
    re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}"),
    re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+\-]\d{2}:?\d{2})?"),
    re.compile(r"\b[A-Z][A-Za-z_]+(?:/[A-Za-z_\-+0-9]+)+"),
    re.compile(r"#(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{3,4})\b"),
    re.compile(r"(?<![\w\-])(?:en|de|fa|ar|ja|pt-BR)(?![\w\-])"),
    # BCP 47 tags with a script or region subtag, as examples in hints: zh-Hant, sr-Latn, pt-BR.
    re.compile(r"(?<![\w\-])[a-z]{2,3}-(?:[A-Z][a-z]{3}(?:-(?:[A-Z]{2}|\d{3}))?|[A-Z]{2}|\d{3})(?![\w\-])"),
    # The URL scheme named in prose ("an https URL"), as URLs write it.
    re.compile(r"(?<![\w\-/])https?(?![\w\-])"),
    # HTTP header names, which Japanese writes without spaces around them: X-Installation-Id.
    re.compile(r"(?<![A-Za-z0-9_\-])X(?:-[A-Z][A-Za-z]*)+(?![A-Za-z0-9_\-])"),
    # Identifiers joined with `.`, `_` or `:`: field paths, event and error codes, API scopes.
    re.compile(r"(?<![^\W_])[A-Za-z][A-Za-z0-9]*(?:[._:][A-Za-z0-9]+)+(?![^\W_])"),
]

PAGES = ["list", "composer-new", "composer", "campaign", "report", "settings", "app"]


def page_path(page: str, seeded: "Seeded") -> str:
    return {
        "list": "/campaigns",
        "composer-new": "/campaigns/new",
        "composer": f"/campaigns/{seeded.campaign}/edit",
        "campaign": f"/campaigns/{seeded.campaign}",
        "report": f"/campaigns/{seeded.campaign}/report",
        "settings": "/account",
        "app": f"/apps/{seeded.app}",
    }[page]


# --- catalogs ------------------------------------------------------------------

def catalog(language: str) -> dict[str, str]:
    """The catalog's strings by dotted key; a plural's forms as `key.one`, `key.other`, ..."""
    flat: dict[str, str] = {}

    def walk(node, prefix):
        for key, value in node.items():
            path = f"{prefix}.{key}" if prefix else key
            if isinstance(value, dict):
                walk(value, path)
            else:
                flat[path] = value

    walk(json.loads((LOCALES / f"{language}.json").read_text(encoding="utf-8")), "")
    return flat


def words_of(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"[^\W\d_]+", re.sub(r"\{[^}]*\}", " ", text))}


@dataclass
class EnglishChecker:
    """Tells English text on a page in `language` from translated text, user data and the allow-list."""

    language: str
    # en.json strings the language's catalog translates (a string it keeps as it is, such as "JSON", is fine).
    english: dict[str, str] = field(default_factory=dict)
    patterns: list[tuple[re.Pattern, str]] = field(default_factory=list)
    # For German, whose own words are Latin too: words of en.json that no other catalog uses.
    english_only_words: set[str] = field(default_factory=set)

    @classmethod
    def make(cls, language: str) -> "EnglishChecker":
        english, own = catalog("en"), catalog(language)
        checker = cls(language)
        for key, text in english.items():
            if own.get(key, "").strip() == text.strip() or not re.search(r"[A-Za-z]{2}", re.sub(r"\{[^}]*\}", "", text)):
                continue
            if "{" in text:
                # Only a string whose own words are enough to recognize it ("{event} where {conditions}" would
                # match any sentence with "where" in it; the word check below still finds that one).
                if len(re.findall(r"[A-Za-z]", re.sub(r"\{[^}]*\}", "", text))) < 12:
                    continue
                pattern = re.escape(text.strip())
                pattern = re.sub(r"\\\{[^}]*\\\}", ".+?", pattern)
                checker.patterns.append((re.compile(f"^{pattern}$"), key))
            else:
                checker.english[text.strip()] = key
        others: set[str] = set()
        for other in LANGUAGES:
            if other != "en":
                for text in catalog(other).values():
                    others |= words_of(text)
        english_words: set[str] = set()
        for text in english.values():
            english_words |= words_of(text)
        checker.english_only_words = {word for word in english_words - others if len(word) >= 2} - {w.lower() for w in ALLOWED_WORDS}
        return checker

    def problems(self, text: str) -> list[str]:
        """Why `text` reads as English (empty when it does not)."""
        if self.language == "en":
            return []
        stripped = text.strip()
        if stripped in self.english:
            return [f"is en.json's {self.english[stripped]}"]
        for pattern, key in self.patterns:
            if pattern.match(stripped):
                return [f"is en.json's {key}"]
        rest = stripped
        for data in sorted(USER_DATA, key=len, reverse=True):
            rest = rest.replace(data, " ")
        for pattern in NOT_WORDS:
            rest = pattern.sub(" ", rest)
        if self.language == "de":
            found = [w for w in re.findall(r"[A-Za-zÄÖÜäöüß]+", rest) if w.lower() in self.english_only_words and w not in ALLOWED_WORDS]
        else:
            found = [w for w in re.findall(r"[A-Za-z]{4,}", rest) if w not in ALLOWED_WORDS]
        return [f"English words {found}"] if found else []


# --- seeding -----------------------------------------------------------------------

def api(server, key: str, method: str, path: str, document=None, if_match: str | None = None):
    headers = {"Authorization": f"Bearer {key}"}
    data = None
    if document is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(document).encode()
    if if_match:
        headers["If-Match"] = if_match
    request = urllib.request.Request(server.url(path), data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as answer:
        body = answer.read()
        return json.loads(body) if body else None


def campaign_document(app_id: int) -> dict:
    translations = {tag: version for tag, version in VERSIONS.items() if tag != "en"}
    return {
        "app": app_id, "name": CAMPAIGN_NAME, "description": "Ẓdescription", "priority": 3,
        "schedule": {"start": None, "end": "2030-12-01T08:00:00Z", "timeZone": "Asia/Tehran"},
        "triggers": [
            {"event": "app_launch"},
            {"event": "purchase", "filters": [{"property": "zq_sku", "op": "eq", "value": "Ẓsku"}]},
            {"event": "zq_level"},
        ],
        "frequency": {"type": "every_n_days", "days": 7},
        "targeting": {"platforms": ["ios", "android"], "languages": ["en", "fa", "ar", "de", "ja"], "percentage": 80},
        "message": {
            "layout": "card",
            "title": {"text": DEFAULT_TITLE, "color": "#202124"},
            "body": {"text": DEFAULT_BODY, "color": "#5F6368"},
            "imageUrl": "https://example.com/portrait.png",
            "backgroundColor": "#FFFFFF",
            "primaryAction": {"text": "Shop now", "textColor": "#FFFFFF", "buttonColor": "#1A73E8", "url": "https://example.com/shop"},
            "secondaryAction": {"text": "Not now"},
            "translations": translations,
        },
        "data": [{"key": "Ẓpromo", "value": "Ẓcode"}],
    }


def events(campaign: int) -> dict:
    now = datetime.now(timezone.utc)
    items = []
    kinds = [("impression", {})] * 6 + [
        ("click", {"action": "primary", "url": "https://example.com/shop"}), ("click", {"action": "secondary"}),
        ("dismiss", {"dismissType": "swipe"}), ("dismiss", {"dismissType": "auto"}), ("error", {"errorCode": "image_fetch"}),
        ("conversion", {"event": "zq_purchase"}),
    ]
    for day in range(6):
        for index, (kind, extra) in enumerate(kinds * (1 + day % 3)):
            items.append({
                "id": str(uuid.uuid4()), "type": kind, "campaignId": campaign,
                "occurredAt": (now - timedelta(days=day, minutes=index)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "platform": ["ios", "android", "web"][index % 3], "installationId": f"iid-{day}-{index % 4}", **extra,
            })
    return {"events": items}


@dataclass
class Seeded:
    server: object
    campaign: int
    app: int


@pytest.fixture(scope="module")
def localized_herald(tmp_path_factory, herald_cli, herald_serve):
    workdir = tmp_path_factory.mktemp("herald-localized")
    database = workdir / "herald.sqlite"
    for language in LANGUAGES:
        herald_cli("user", "create", "--email", f"{language}@example.com", "--name", "Ẓmain", "--role", "admin",
                   "--password-stdin", database=database, cwd=workdir, stdin=PASSWORD + "\n")
    app_id = int(herald_cli("app", "create", "--name", APP_NAME, "--platform", "ios", "--platform", "android",
                            database=database, cwd=workdir).split()[-1])
    key = herald_cli("key", "create", "--app", str(app_id), "--name", "Ẓmain", "--scope", "campaigns:read",
                     "--scope", "campaigns:write", "--scope", "events:write", database=database, cwd=workdir).split()[-1]
    herald_cli("app", "origin", "add", "--app", str(app_id), "https://shop.example.com", database=database, cwd=workdir)
    with herald_serve(workdir, database) as server:
        created = api(server, key, "POST", "/api/v1/campaigns", campaign_document(app_id))
        campaign = created["id"]
        api(server, key, "POST", f"/api/v1/campaigns/{campaign}/publish")
        api(server, key, "POST", "/api/v1/events", events(campaign))
        yield Seeded(server=server, campaign=campaign, app=app_id)


# --- the survey --------------------------------------------------------------------

VISIBLE_TEXT_JS = r"""
const out = [];
const skip = new Set(["SCRIPT", "STYLE", "TEXTAREA", "NOSCRIPT", "TEMPLATE", "CODE", "KBD", "SAMP"]);
const describe = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
  (el.classList.length ? "." + Array.from(el.classList).slice(0, 2).join(".") : "");
const shown = (el) => el.checkVisibility ? el.checkVisibility({visibilityProperty: true}) : !!el.offsetParent;
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  const text = node.nodeValue.replace(/\s+/g, " ").trim();
  const parent = node.parentElement;
  if (!text || !parent || parent.closest("script,style,textarea,noscript,template,code,kbd,samp")) continue;
  if (!shown(parent)) continue;
  out.push({text, where: describe(parent)});
}
for (const el of document.querySelectorAll("[title],[alt],[placeholder],[aria-label],input[type=submit],input[type=button]")) {
  if (el.closest("code,kbd,samp")) continue;
  for (const name of ["title", "alt", "placeholder", "aria-label"]) {
    const value = (el.getAttribute(name) || "").trim();
    if (value) out.push({text: value, where: describe(el) + "[" + name + "]"});
  }
  if (el.matches("input[type=submit],input[type=button]") && el.value.trim()) out.push({text: el.value.trim(), where: describe(el) + "[value]"});
}
out.push({text: document.title, where: "title"});
return out;
"""

OVERFLOW_JS = r"""
const root = document.documentElement;
const width = root.clientWidth;
const describe = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
  (el.classList.length ? "." + Array.from(el.classList).slice(0, 3).join(".") : "");
const offenders = [];
for (const el of document.body.querySelectorAll("*")) {
  const rect = el.getBoundingClientRect();
  if (rect.width === 0 || rect.height === 0) continue;
  if (rect.right <= width + 1 && rect.left >= -1) continue;
  const style = getComputedStyle(el);
  if (style.visibility === "hidden" || style.clip !== "auto" || style.clipPath !== "none") continue;
  // Inside a box that scrolls or clips (a wide table in its scroll area) is fine.
  let contained = false;
  for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
    if (getComputedStyle(up).overflowX !== "visible") { contained = true; break; }
  }
  if (contained || offenders.some((o) => o.el.contains(el))) continue;
  offenders.push({el, text: describe(el) + " from " + Math.round(rect.left) + " to " + Math.round(rect.right) +
    " px: '" + (el.innerText || el.getAttribute("aria-label") || "").replace(/\s+/g, " ").trim().slice(0, 60) + "'"});
}
return {scrollWidth: root.scrollWidth, clientWidth: width, offenders: offenders.slice(0, 8).map((o) => o.text)};
"""


@dataclass
class Visit:
    language: str
    page: str
    width: int
    path: str
    lang: str | None = None
    dir: str | None = None
    overflow: dict = field(default_factory=dict)
    texts: list[dict] = field(default_factory=list)
    axe: list[dict] | None = None
    screenshot: Path | None = None

    @property
    def label(self) -> str:
        return f"{self.language} {self.path} at {self.width} px"


def set_width(driver, width: int, height: int | None = None) -> None:
    """A desktop window, or at phone widths a phone's (a touch screen that honours the viewport meta tag)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height or (900 if width > 600 else 844), "deviceScaleFactor": 1, "mobile": width < 600,
    })


def full_page_screenshot(driver, path: Path, width: int) -> None:
    """The whole page: the window is made as tall as the page first, so sticky bars sit where they end up."""
    height = driver.execute_script("return Math.min(document.documentElement.scrollHeight, 16000)")
    set_width(driver, width, height=height)
    try:
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
        path.write_bytes(base64.b64decode(shot["data"]))
    finally:
        set_width(driver, width)


def frame_texts(driver) -> list[dict]:
    """The visible text of the page's frames (the message preview's caption and notices)."""
    texts = []
    for index, frame in enumerate(driver.find_elements(By.TAG_NAME, "iframe")):
        driver.switch_to.frame(frame)
        try:
            texts += [{**item, "where": f"iframe {index} {item['where']}"} for item in driver.execute_script(VISIBLE_TEXT_JS)]
        finally:
            driver.switch_to.default_content()
    return texts


def sign_in(driver, seeded: Seeded, language: str) -> None:
    driver.delete_all_cookies()
    driver.get(seeded.server.url("/login"))
    visible(driver, "input[name=email]").send_keys(f"{language}@example.com")
    driver.find_element(By.CSS_SELECTOR, "input[name=password]").send_keys(PASSWORD)
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, "form[action='/login'] [type=submit]").click()
    wait(driver).until(replaced(old), message="sign-in did not leave the login page")
    assert current_path(driver) != "/login", f"{language}@example.com could not sign in"
    # The settings page, as a person would: choose the language, save.
    driver.get(seeded.server.url("/account"))
    Select(visible(driver, "select[name=language]")).select_by_value(language)
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, "form[action='/account'] [type=submit]").click()
    wait(driver).until(replaced(old), message="the settings form was not submitted")


@pytest.fixture(scope="module")
def survey(driver, localized_herald) -> dict[str, list[Visit]]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    axe = axe_source()
    visits: dict[str, list[Visit]] = {}
    try:
        for language in LANGUAGES:
            sign_in(driver, localized_herald, language)
            visits[language] = []
            for width in WIDTHS:
                set_width(driver, width)
                for page in PAGES:
                    visit = Visit(language, page, width, page_path(page, localized_herald))
                    driver.get(localized_herald.server.url(visit.path))
                    visible(driver, "main")
                    html = driver.find_element(By.TAG_NAME, "html")
                    visit.lang, visit.dir = html.get_attribute("lang"), html.get_attribute("dir")
                    visit.overflow = driver.execute_script(OVERFLOW_JS)
                    if width == WIDTHS[0]:  # the same words at both widths
                        visit.texts = driver.execute_script(VISIBLE_TEXT_JS) + frame_texts(driver)
                    # At both widths: a phone's layout has its own scroll areas and stacking.
                    driver.execute_script(axe)
                    visit.axe = driver.execute_async_script(AXE_RUN_JS)
                    if page in SCREENSHOT_PAGES:
                        visit.screenshot = SCREENSHOTS / f"{language}-{page}-{width}.png"
                        full_page_screenshot(driver, visit.screenshot, width)
                    visits[language].append(visit)
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        driver.delete_all_cookies()
    return visits


# --- the tests ---------------------------------------------------------------------

@pytest.mark.parametrize("language", LANGUAGES)
def test_html_lang_and_direction(survey, language):
    wanted_dir = "rtl" if language in RIGHT_TO_LEFT else "ltr"
    wrong = [f"{v.label}: <html lang={v.lang!r} dir={v.dir!r}>, expected lang={language!r} dir={wanted_dir!r}"
             for v in survey[language] if v.lang != language or v.dir != wanted_dir]
    if wrong:
        pytest.fail("\n".join(wrong), pytrace=False)


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_horizontal_overflow(survey, language):
    wrong = []
    for visit in survey[language]:
        overflow = visit.overflow
        if overflow["scrollWidth"] > overflow["clientWidth"]:
            wrong.append(f"{visit.label}: the page is {overflow['scrollWidth']} px wide in a {overflow['clientWidth']} px window")
        wrong += [f"{visit.label}: sticks out: {offender}" for offender in overflow["offenders"]]
    if wrong:
        pytest.fail("\n".join(wrong), pytrace=False)


@pytest.mark.parametrize("language", [language for language in LANGUAGES if language != "en"])
def test_no_english_left(survey, language):
    checker = EnglishChecker.make(language)
    wrong: list[str] = []
    for visit in survey[language]:
        for item in visit.texts:
            for problem in checker.problems(item["text"]):
                line = f"{visit.path}: '{item['text'][:100]}' ({item['where']}) {problem}"
                if line not in wrong:
                    wrong.append(line)
    if wrong:
        pytest.fail(f"{len(wrong)} English texts in the {language} console:\n" + "\n".join(wrong), pytrace=False)


@pytest.mark.parametrize("language", LANGUAGES)
def test_axe_finds_no_serious_violations(survey, language):
    wrong = []
    for visit in survey[language]:
        for violation in visit.axe or []:
            wrong.append(f"{visit.label}: {violation['impact']} {violation['id']} ({violation['help']}) on {violation['count']} elements: "
                         + "; ".join(violation["nodes"]))
    if wrong:
        pytest.fail("\n".join(wrong), pytrace=False)


def test_screenshots_are_saved(survey):
    missing = [f"{language}-{page}-{width}.png" for language in LANGUAGES for page in SCREENSHOT_PAGES for width in WIDTHS
               if not (SCREENSHOTS / f"{language}-{page}-{width}.png").is_file()]
    if missing:
        pytest.fail(f"screenshots missing from {SCREENSHOTS}: {missing}", pytrace=False)
