"""herald.js in a real (headless) Chromium: the six layouts drawn on a page, keyboard access, right to
left, orientation by window size, auto-dismissal, beacons on page hide, retries (Retry-After, backoff with
jitter), a refused key, the event queue's bound, storage that fails, and version patterns that would
freeze the page.

A fake Herald answers through the client's fetch hook (herald_js_pages/testkit.js); the page is served by a
loopback site (herald_js_site.py). Screenshots go to test-artifacts/screenshots/herald-js-*.png.
"""

from __future__ import annotations

import json
import re

import pytest
from browser_helpers import axe_source, wait
from herald_js_site import REPO_ROOT
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

SCREENSHOTS = REPO_ROOT / "test-artifacts" / "screenshots"
UUID_V7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
DESKTOP = (1280, 900)
PHONE = (390, 844)
PHONE_LANDSCAPE = (844, 390)
DIALOGS = {"card", "modal", "image_only", "fullscreen"}


def messages(image) -> dict[str, dict]:
    """One message of each layout, with colors, as a marketer would compose them."""
    return {
        "card": {
            "layout": "card", "title": {"text": "Spring sale", "color": "#202124"},
            "body": {"text": "20% off everything in the new collection until Sunday."},
            "imageUrl": image("portrait"), "landscapeImageUrl": image("landscape"), "backgroundColor": "#FFFFFF",
            "primaryAction": {"text": "Shop now", "buttonColor": "#CC0D47A1", "url": "https://shop.example/sale"},
            "secondaryAction": {"text": "Later"},
        },
        "modal": {
            "layout": "modal", "title": {"text": "Free shipping this week"}, "body": {"text": "On every order over 30 €."},
            "imageUrl": image("wide"), "backgroundColor": "#FFF8E1",
            "primaryAction": {"text": "Start shopping", "url": "https://shop.example/"},
        },
        "image_only": {"layout": "image_only", "imageUrl": image("square"), "action": {"url": "https://shop.example/new"}},
        "banner": {
            "layout": "banner", "title": {"text": "New: gift cards"}, "body": {"text": "Send one in a minute, by email."},
            "imageUrl": image("icon"), "backgroundColor": "#E8F0FE", "action": {"url": "https://shop.example/gift"},
            "dismiss": {"seconds": 120},
        },
        "slideup": {
            "layout": "slideup", "body": {"text": "Your cart is waiting: 2 items saved for you."}, "imageUrl": image("icon"),
            "action": {"url": "https://shop.example/cart"}, "slideFrom": "bottom", "dismiss": {"seconds": 120},
        },
        "fullscreen": {
            "layout": "fullscreen", "title": {"text": "Welcome to the new app"},
            "body": {"text": "Faster checkout, saved addresses and order tracking."}, "imageUrl": image("wide"),
            "backgroundColor": "#FFFFFF", "primaryAction": {"text": "Take the tour", "url": "https://shop.example/tour"},
            "secondaryAction": {"text": "Not now"},
        },
    }


# --- helpers -----------------------------------------------------------------------------------------


def run(driver, body: str, *args):
    """Runs `body` as an async function of `args` in the page and returns what it returns."""
    result = driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const args = Array.from(arguments).slice(0, -1);
        (async (...args) => { BODY })(...args).then(
          (value) => done({ value: value === undefined ? null : value }),
          (error) => done({ error: String((error && error.stack) || error) }));
        """.replace("BODY", body),
        *args,
    )
    assert "error" not in result, result["error"]
    return result["value"]


@pytest.fixture
def page(driver, herald_js_site):
    """The test shop page with herald.js, a fresh localStorage and a 1280 × 900 viewport; returns an opener for other pages."""
    driver.set_script_timeout(60)

    def open_page(path: str = "/app.html", size: tuple[int, int] = DESKTOP):
        set_viewport(driver, size)
        driver.get(herald_js_site.url(path))
        wait(driver).until(lambda d: d.execute_script("return document.readyState === 'complete' && !!window.testkit"))
        driver.execute_script("localStorage.clear()")
        return driver

    open_page()
    yield open_page
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def set_viewport(driver, size: tuple[int, int]) -> None:
    width, height = size
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def image_url(site):
    return lambda name: site.url(f"/img/{name}.png")


def show(driver, campaign_id: int, message: dict, options: dict | None = None, **campaign) -> dict:
    """Starts a client whose feed has the one campaign, fires its trigger and waits until it is drawn."""
    return run(
        driver,
        """
        const [id, message, options, extra] = args;
        testkit.setCampaigns([testkit.campaign(id, message, extra)]);
        const herald = await testkit.start(options);
        const outcome = herald.triggerEvent(`show_${id}`);
        if (outcome.outcome === "displayed" || outcome.outcome === "pending") {
          await testkit.waitFor(() => testkit.called("displayed").length > 0);
          await Promise.all(testkit.host(id).shadowRoot.getAnimations().map((animation) => animation.finished));
        }
        return outcome;
        """,
        campaign_id, message, options or {}, campaign,
    )


MEASURE = """
const host = testkit.host(args[0]);
if (!host) return null;
const root = host.shadowRoot;
const message = root.querySelector(".message");
const box = (element) => {
  const r = element.getBoundingClientRect();
  return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height };
};
const style = (element) => getComputedStyle(element);
const labelledBy = message.getAttribute("aria-labelledby");
return {
  campaign: host.getAttribute("data-herald-message"),
  layout: host.getAttribute("data-layout"),
  role: message.getAttribute("role"),
  ariaModal: message.getAttribute("aria-modal"),
  label: labelledBy ? root.getElementById(labelledBy).textContent : message.getAttribute("aria-label"),
  dir: message.getAttribute("dir"),
  lang: message.getAttribute("lang"),
  direction: style(message).direction,
  flexDirection: style(message).flexDirection,
  box: box(message),
  viewport: { width: innerWidth, height: innerHeight },
  surface: style(message).backgroundColor,
  title: root.querySelector(".title") && { text: root.querySelector(".title").textContent, color: style(root.querySelector(".title")).color },
  buttons: [...root.querySelectorAll("button")].map((button) => ({
    text: button.textContent, label: button.getAttribute("aria-label"), role: button.dataset.button || null,
    close: button.hasAttribute("data-close"), background: style(button).backgroundColor, color: style(button).color,
    box: box(button), tabIndex: button.tabIndex,
  })),
  images: [...root.querySelectorAll("img")].map((image) => ({ alt: image.getAttribute("alt"), src: image.currentSrc, width: image.naturalWidth, box: box(image) })),
  focusInside: document.activeElement === host,
  focusedPart: root.activeElement && (root.activeElement === message ? "message" : root.activeElement.getAttribute("aria-label") || root.activeElement.textContent),
};
"""


def measure(driver, campaign_id):
    return run(driver, MEASURE, str(campaign_id))


def inside(inner: dict, outer_width: float, outer_height: float, tolerance: float = 1.0) -> bool:
    return inner["left"] >= -tolerance and inner["top"] >= -tolerance and inner["right"] <= outer_width + tolerance and inner["bottom"] <= outer_height + tolerance


def screenshot(driver, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"herald-js-{name}.png"
    assert driver.save_screenshot(str(path)), f"could not save {path}"


AXE_ON_THE_MESSAGE = """
const done = arguments[arguments.length - 1];
axe.run({ include: [["[data-herald-message]"]] }, { resultTypes: ["violations"] }).then((results) => done(
  results.violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => JSON.stringify(node.target)).join(", ")})`)),
  (error) => done([`axe failed: ${error}`]));
"""


def accessibility_problems(driver) -> list[str]:
    """axe-core's serious and critical findings inside the message (its shadow root included)."""
    driver.execute_script(axe_source())
    return driver.execute_async_script(AXE_ON_THE_MESSAGE)


def events_made(driver) -> list[dict]:
    """Every event the client made: those uploaded to the fake server, then those still queued."""
    return run(
        driver,
        """
        const sent = testkit.requests.filter((request) => request.path.endsWith("/api/v1/events") && request.body).flatMap((request) => request.body.events);
        const ids = new Set(sent.map((event) => event.id));
        return [...sent, ...testkit.herald.queuedEvents.filter((event) => !ids.has(event.id))];
        """,
    )


# --- the six layouts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["card", "modal", "image_only", "banner", "slideup", "fullscreen"])
def test_each_layout_is_drawn_with_its_attributes_colors_and_roles(page, driver, herald_js_site, layout):
    message = messages(image_url(herald_js_site))[layout]
    for size, suffix in ((DESKTOP, ""), (PHONE, "-phone")):
        page(size=size)
        driver.execute_script("document.getElementById('before').focus()")
        outcome = show(driver, 7, message)
        # Displayed, or pending while the images it started loading with the feed arrive.
        assert outcome["campaign"] == 7 and outcome["outcome"] in ("displayed", "pending"), outcome
        seen = measure(driver, 7)
        screenshot(driver, layout + suffix)
        assert accessibility_problems(driver) == []

        assert seen["campaign"] == "7" and seen["layout"] == layout
        assert inside(seen["box"], seen["viewport"]["width"], seen["viewport"]["height"]), seen["box"]
        assert seen["images"] and all(image["width"] > 0 and image["alt"] == "" for image in seen["images"]), seen["images"]
        assert seen["buttons"], "every layout can be closed or acted on with a button"
        for button in seen["buttons"]:
            assert button["tabIndex"] >= 0 and inside(button["box"], seen["viewport"]["width"], seen["viewport"]["height"]), button
            assert button["text"].strip() or button["label"], f"a button with no name: {button}"
        if layout in DIALOGS:
            assert seen["role"] == "dialog" and seen["ariaModal"] == "true"
            assert seen["label"] == (message["title"]["text"] if "title" in message else "Message")
            assert seen["focusInside"] and seen["focusedPart"] == "message", "a dialog takes the focus"
        else:
            assert seen["role"] == "status"
            assert not seen["focusInside"], "a banner or slide-up never takes the focus"
            assert any(button["close"] and button["label"] == "Close" for button in seen["buttons"])
        if layout == "banner":
            assert seen["box"]["top"] == 0 and seen["box"]["width"] == seen["viewport"]["width"]
            assert seen["surface"] == "rgb(232, 240, 254)"
        if layout == "slideup":
            assert seen["viewport"]["height"] - seen["box"]["bottom"] <= 24, "a slide-up from the bottom sits at the bottom edge"
        if layout == "card":
            assert seen["surface"] == "rgb(255, 255, 255)" and seen["title"]["color"] == "rgb(32, 33, 36)"
            primary = next(button for button in seen["buttons"] if button["role"] == "primary")
            assert primary["background"] == "rgba(13, 71, 161, 0.8)", "#AARRGGBB is alpha first"
            assert [button["role"] for button in seen["buttons"]] == ["secondary", "primary"]
        if layout == "modal":
            assert seen["surface"] == "rgb(255, 248, 225)"
        if layout == "fullscreen" and size == PHONE:
            assert seen["box"]["width"] == PHONE[0] and seen["box"]["height"] == PHONE[1], "full screen on a phone"

        displayed = run(driver, "return testkit.called('displayed');")
        assert displayed == [{"name": "displayed", "campaignId": 7, "local": False, "element": "7"}]
        assert [event["type"] for event in events_made(driver)] == ["impression"]


def test_a_click_reports_the_action_and_ends_the_display(page, driver, herald_js_site):
    show(driver, 3, messages(image_url(herald_js_site))["card"])
    run(driver, "testkit.host(3).shadowRoot.querySelector('[data-button=primary]').click();")
    assert run(driver, "return !!testkit.host(3) || testkit.herald.slot;") is None
    assert run(driver, "return testkit.called('clicked');") == [
        {"name": "clicked", "campaignId": 3, "local": False, "action": "primary", "url": "https://shop.example/sale"}]
    events = events_made(driver)
    assert [(event["type"], event.get("action"), event.get("url")) for event in events] == [
        ("impression", None, None), ("click", "primary", "https://shop.example/sale")]
    for event in events:
        assert UUID_V7.match(event["id"]) and event["platform"] == "web" and event["campaignId"] == 3
        assert event["installationId"] == "0e9a4b6c-0000-4000-8000-00000000beef"
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$", event["occurredAt"])


def test_a_secondary_button_without_a_link_and_the_close_button_dismiss(page, driver, herald_js_site):
    show(driver, 3, messages(image_url(herald_js_site))["card"])
    run(driver, "testkit.host(3).shadowRoot.querySelector('[data-button=secondary]').click();")
    page()
    show(driver, 4, messages(image_url(herald_js_site))["modal"])
    run(driver, "testkit.host(4).shadowRoot.querySelector('[data-close]').click();")
    assert run(driver, "return testkit.called('dismissed');") == [{"name": "dismissed", "campaignId": 4, "local": False, "type": "click"}]
    assert [(event["type"], event.get("dismissType")) for event in events_made(driver)] == [("impression", None), ("dismiss", "click")]


# --- keyboard ----------------------------------------------------------------------------------------


def test_a_dialog_traps_focus_and_escape_dismisses_it_returning_focus(page, driver, herald_js_site):
    driver.execute_script("document.getElementById('before').focus()")
    show(driver, 5, messages(image_url(herald_js_site))["fullscreen"])
    focused = []
    for _ in range(5):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        seen = measure(driver, 5)
        assert seen["focusInside"], "Tab left the dialog"
        focused.append(seen["focusedPart"])
    assert focused == ["Not now", "Take the tour", "Close", "Not now", "Take the tour"]
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
    assert measure(driver, 5)["focusedPart"] == "Not now"
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
    assert measure(driver, 5)["focusedPart"] == "Close", "Shift-Tab wraps to the last button"
    driver.execute_script("document.getElementById('after').focus()")
    assert measure(driver, 5)["focusInside"], "focus moved to the page behind comes back"

    ActionChains(driver).send_keys(Keys.ESCAPE).perform()
    assert run(driver, "return testkit.host(5) === null;")
    assert run(driver, "return document.activeElement.id;") == "before", "focus returns where it was"
    assert run(driver, "return testkit.called('dismissed').map((call) => call.type);") == ["click"]


def test_a_banner_leaves_focus_alone_and_its_buttons_are_reachable_by_keyboard(page, driver, herald_js_site):
    driver.execute_script("document.getElementById('after').focus()")
    show(driver, 6, messages(image_url(herald_js_site))["banner"])
    assert run(driver, "return document.activeElement.id;") == "after"
    ActionChains(driver).send_keys(Keys.TAB).perform()
    assert measure(driver, 6)["focusedPart"] == "New: gift cardsSend one in a minute, by email.", "Tab reaches the banner"
    outline = run(driver, "return getComputedStyle(testkit.host(6).shadowRoot.activeElement).outlineStyle;")
    assert outline == "solid", "the focused button shows where the keyboard is"
    ActionChains(driver).send_keys(Keys.TAB).perform()
    assert measure(driver, 6)["focusedPart"] == "Close"
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    assert run(driver, "return testkit.called('dismissed').map((call) => call.type);") == ["click"]


# --- right to left -----------------------------------------------------------------------------------


def test_right_to_left_by_the_language_shown_and_by_the_text(page, driver, herald_js_site):
    modal = messages(image_url(herald_js_site))["modal"]
    modal["translations"] = {"fa": {"title": {"text": "ارسال رایگان این هفته"}, "body": {"text": "برای هر سفارش بالای ۳۰ یورو."},
                                    "primaryAction": {"text": "شروع خرید"}}}
    show(driver, 8, modal, {"language": "fa-IR"})
    seen = measure(driver, 8)
    screenshot(driver, "rtl")
    assert (seen["dir"], seen["lang"], seen["direction"]) == ("rtl", "fa", "rtl")
    assert seen["title"]["text"] == "ارسال رایگان این هفته"
    close = next(button for button in seen["buttons"] if button["close"])
    assert close["box"]["left"] < seen["box"]["left"] + 20 and close["label"] == "بستن", "the close button mirrors, named in Persian"
    assert [event.get("language") for event in events_made(driver)] == ["fa"]

    page()
    arabic = {"layout": "banner", "title": {"text": "عرض خاص"}, "body": {"text": "خصم ٢٠٪ اليوم فقط"}}
    show(driver, 9, arabic, {"language": "en"})
    seen = measure(driver, 9)
    assert (seen["dir"], seen["lang"]) == ("rtl", ""), "the default version reads in its text's direction"

    page()
    show(driver, 10, messages(image_url(herald_js_site))["banner"], {"language": "fa"})
    assert measure(driver, 10)["dir"] == "ltr", "a Persian device shown the English default reads left to right"


# --- orientation -------------------------------------------------------------------------------------


def test_the_card_follows_the_window_s_orientation(page, driver, herald_js_site):
    card = messages(image_url(herald_js_site))["card"]
    page(size=PHONE)
    show(driver, 11, card)
    portrait = measure(driver, 11)
    assert portrait["images"][0]["src"].endswith("/img/portrait.png") and portrait["flexDirection"] == "column"
    set_viewport(driver, PHONE_LANDSCAPE)
    wait(driver).until(lambda d: measure(d, 11)["images"][0]["src"].endswith("/img/landscape.png"))
    landscape = measure(driver, 11)
    screenshot(driver, "card-landscape")
    assert landscape["flexDirection"] == "row"
    assert inside(landscape["box"], *PHONE_LANDSCAPE)


def test_a_fullscreen_locked_to_the_other_orientation_is_discarded(page, driver, herald_js_site):
    fullscreen = dict(messages(image_url(herald_js_site))["fullscreen"], orientation="landscape")
    page(size=PHONE)
    assert show(driver, 12, fullscreen) == {"event": "show_12", "outcome": "discarded", "reason": "orientation", "campaign": 12}
    assert run(driver, "return [testkit.herald.discards.orientation, testkit.host(12)];") == [1, None]
    page(size=PHONE_LANDSCAPE)
    assert show(driver, 12, fullscreen)["outcome"] in ("displayed", "pending")
    assert run(driver, "return [testkit.herald.discards.orientation, !!testkit.host(12)];") == [0, True]


# --- auto-dismissal ----------------------------------------------------------------------------------


def test_banners_and_slide_ups_dismiss_themselves(page, driver, herald_js_site):
    image = image_url(herald_js_site)
    banner = dict(messages(image)["banner"], dismiss={"seconds": 1})
    show(driver, 13, banner)
    run(driver, "await testkit.waitFor(() => testkit.host(13) === null, 4000);")
    [shown_at], [dismissed_at] = run(driver, "return [testkit.calledAt('displayed'), testkit.calledAt('dismissed')];")
    assert 950 <= dismissed_at - shown_at < 2000, "dismissed a second after it was seen"
    assert run(driver, "return testkit.called('dismissed').map((call) => call.type);") == ["auto"]

    page()
    slideup = dict(messages(image)["slideup"], dismiss={"seconds": 1}, slideFrom="top")
    show(driver, 14, slideup)
    assert measure(driver, 14)["box"]["top"] <= 30, "slideFrom top sits at the top"
    run(driver, "await testkit.waitFor(() => testkit.host(14) === null, 4000);")
    assert [event.get("dismissType") for event in events_made(driver)] == [None, "auto"]


def test_the_layouts_own_dismissal_times_apply_without_one_of_the_message(page, driver, herald_js_site):
    image = image_url(herald_js_site)
    for campaign_id, layout, seconds in ((15, "banner", 12), (16, "slideup", 8)):
        page()
        # Records the timers the page sets, to read the one that will dismiss the message.
        driver.execute_script("""
            window.timerDelays = [];
            const original = window.setTimeout;
            window.setTimeout = (callback, delay, ...rest) => { window.timerDelays.push(delay); return original(callback, delay, ...rest); };
        """)
        message = dict(messages(image)[layout])
        del message["dismiss"]
        show(driver, campaign_id, message)
        run(driver, "await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));")
        assert seconds * 1000 in driver.execute_script("return window.timerDelays;")


def test_a_swipe_towards_the_edge_dismisses_a_slide_up(page, driver, herald_js_site):
    show(driver, 17, messages(image_url(herald_js_site))["slideup"])
    box = measure(driver, 17)["box"]
    x, y = int(box["left"] + 40), int(box["top"] + 5)
    actions = ActionChains(driver)
    actions.w3c_actions.pointer_action.move_to_location(x, y).pointer_down().move_to_location(x, y + 25).move_to_location(x, y + 50).pointer_up()
    actions.perform()
    assert run(driver, "return testkit.called('dismissed').map((call) => call.type);") == ["swipe"]


# --- the impression waits for the picture ------------------------------------------------------------


def test_the_impression_is_reported_once_the_image_is_drawn(page, driver, herald_js_site):
    modal = dict(messages(image_url(herald_js_site))["modal"], imageUrl=herald_js_site.url("/img/wide.png?delay=1.5"))
    timing = run(
        driver,
        """
        testkit.setCampaigns([testkit.campaign(18, args[0])]);
        // The pipeline is told the image is ready; the page's <img> still waits 1.5 s for it.
        const herald = await testkit.start({ loadImage: async () => true });
        const started = performance.now();
        herald.triggerEvent("show_18");
        const onPage = !!testkit.host(18);
        const early = herald.queuedEvents.length;
        await testkit.waitFor(() => testkit.called("displayed").length > 0, 8000);
        return { onPage, early, waited: performance.now() - started };
        """,
        modal,
    )
    assert timing["onPage"] and timing["early"] == 0
    assert timing["waited"] >= 1200, timing


def test_an_image_the_page_cannot_draw_is_a_display_error(page, driver, herald_js_site):
    modal = dict(messages(image_url(herald_js_site))["modal"], imageUrl=herald_js_site.url("/img/missing.png"))
    result = run(
        driver,
        """
        testkit.setCampaigns([testkit.campaign(19, args[0])]);
        const herald = await testkit.start({ loadImage: async () => true });
        herald.triggerEvent("show_19");
        await testkit.waitFor(() => testkit.called("displayError").length > 0);
        return { calls: testkit.calls.map((call) => call.name).filter((name) => name !== "noMatchingTrigger"), onPage: !!testkit.host(19), slot: herald.slot,
                 events: herald.queuedEvents.map((event) => [event.type, event.errorCode]) };
        """,
        modal,
    )
    assert result["calls"] == ["decide", "displayError"] and not result["onPage"] and result["slot"] is None
    assert result["events"] == [["error", "image_display"]]


# --- page hide: beacons ------------------------------------------------------------------------------


def test_hiding_the_page_sends_the_queue_by_beacon(page, driver):
    run(
        driver,
        """
        testkit.interceptBeacons();
        for (let i = 0; i < 5; i += 1) testkit.answers.events.push({ status: 503 });
        testkit.setCampaigns([testkit.campaign(20, { layout: "modal", title: { text: "Hello" } })]);
        const herald = await testkit.start();
        herald.triggerEvent("show_20");
        await testkit.waitFor(() => testkit.called("displayed").length > 0);
        testkit.host(20).shadowRoot.querySelector("[data-close]").click();
        """,
    )
    beacons = run(driver, "testkit.setVisibility('hidden'); await testkit.waitFor(() => testkit.beacons.every((b) => b.text !== null)); return testkit.beacons;")
    assert len(beacons) == 1
    beacon = beacons[0]
    assert beacon["url"] == "https://herald.test/api/v1/events?key=hrld_test"
    assert beacon["type"] == "text/plain;charset=utf-8"
    events = json.loads(beacon["text"])["events"]
    assert [(event["type"], event["campaignId"]) for event in events] == [("impression", 20), ("dismiss", 20)]
    assert all(event["installationId"] for event in events)
    assert run(driver, "return testkit.herald.queuedEvents.length;") == 2, "kept until an upload is answered"

    # pagehide (a tab closed, a navigation) sends them too; the server counts a repeated id once.
    beacons = run(driver, "testkit.setVisibility('visible'); window.dispatchEvent(new PageTransitionEvent('pagehide')); return testkit.beacons.length;")
    assert beacons == 2


def test_a_large_queue_leaves_in_beacons_under_64_kilobytes(page, driver):
    beacons = run(
        driver,
        """
        testkit.interceptBeacons();
        testkit.realClock = false;
        testkit.answers.events.push(...Array(5).fill({ status: 503 }));
        testkit.setCampaigns([testkit.campaign(21, { layout: "modal", title: { text: "Hello" } })]);
        const herald = await testkit.start({ renderer: {
          display: (message, report) => { report.impression(); report.click("body", "https://shop.example/" + "x".repeat(200)); },
          withdraw: () => undefined,
        } });
        for (let i = 0; i < 500; i += 1) herald.triggerEvent("show_21");
        const queued = herald.queuedEvents.map((event) => event.id);
        testkit.setVisibility("hidden");
        await testkit.waitFor(() => testkit.beacons.every((b) => b.text !== null));
        return { queued, beacons: testkit.beacons.map((b) => ({ size: b.size, ids: JSON.parse(b.text).events.map((e) => e.id) })) };
        """,
    )
    assert len(beacons["queued"]) == 1000
    assert len(beacons["beacons"]) > 1
    for beacon in beacons["beacons"]:
        assert beacon["size"] < 64 * 1024 and len(beacon["ids"]) <= 500
    assert [event_id for beacon in beacons["beacons"] for event_id in beacon["ids"]] == beacons["queued"]


# --- retries -----------------------------------------------------------------------------------------


def test_retry_after_is_honoured_for_uploads_and_the_feed(page, driver):
    result = run(
        driver,
        """
        testkit.realClock = false;
        const start = testkit.now;
        testkit.setCampaigns([testkit.campaign(22, { layout: "modal", title: { text: "Hello" } })]);
        const herald = await testkit.start({ random: () => 0.5, renderer: {
          display: (message, report) => report.impression(), withdraw: () => undefined } });
        herald.triggerEvent("show_22");
        const posts = () => testkit.requests.filter((request) => request.method === "POST").length;
        const gets = () => testkit.requests.filter((request) => request.method === "GET").length;
        const seen = {};

        testkit.answers.events.push({ status: 503, headers: { "Retry-After": "120" } });
        seen.failed = await herald.flush();
        testkit.now = start + 119000;
        await herald.tick();
        seen.postsBefore = posts();
        testkit.now = start + 120000;
        await herald.tick();
        seen.postsAfter = posts();
        seen.queued = herald.queuedEvents.length;

        testkit.answers.feed.push({ status: 429, headers: { "Retry-After": new Date(start + 120000 + 300000).toUTCString() } });
        testkit.now = start + 180000;
        await herald.refresh();
        seen.getsAfterFailure = gets();
        testkit.now = start + 120000 + 299000;
        await herald.tick();
        seen.getsBefore = gets();
        testkit.now = start + 120000 + 300000;
        await herald.tick();
        seen.getsAfter = gets();
        seen.start = start;
        return seen;
        """,
    )
    assert result["failed"]["status"] == "failed" and result["failed"]["retryAt"] == result["start"] + 120000
    assert (result["postsBefore"], result["postsAfter"], result["queued"]) == (1, 2, 0)
    assert result["getsBefore"] == result["getsAfterFailure"] and result["getsAfter"] == result["getsAfterFailure"] + 1


@pytest.mark.parametrize("random, factor", [(0.0, 0.8), (0.5, 1.0), (0.999999, 1.2)])
def test_backoff_doubles_to_five_minutes_with_twenty_percent_jitter(page, driver, random, factor):
    waits = run(
        driver,
        """
        testkit.realClock = false;
        testkit.setCampaigns([testkit.campaign(23, { layout: "modal", title: { text: "Hello" } })]);
        const herald = await testkit.start({ random: () => args[0], renderer: {
          display: (message, report) => report.impression(), withdraw: () => undefined } });
        herald.triggerEvent("show_23");
        const waits = [];
        for (let attempt = 0; attempt < 11; attempt += 1) {
          testkit.answers.events.push(attempt % 2 === 0 ? { status: 503 } : { networkError: true });
          const answer = await herald.flush();
          if (answer.status !== "failed") throw new Error(`attempt ${attempt}: ${JSON.stringify(answer)}`);
          waits.push(answer.retryAt - testkit.now);
          testkit.now = answer.retryAt - 1;
          const early = await herald.flush();
          if (early.status !== "waiting") throw new Error(`attempt ${attempt} went out early: ${JSON.stringify(early)}`);
          testkit.now = answer.retryAt;
        }
        return waits;
        """,
        random,
    )
    expected = [min(300, 2**attempt) * 1000 * factor for attempt in range(11)]
    assert all(abs(measured - wanted) <= 2 for measured, wanted in zip(waits, expected)), (waits, expected)


def test_feed_failures_back_off_and_the_last_good_feed_stays(page, driver):
    result = run(
        driver,
        """
        testkit.realClock = false;
        const start = testkit.now;
        testkit.setCampaigns([testkit.campaign(24, { layout: "modal", title: { text: "Hello" } })]);
        const herald = await testkit.start({ random: () => 0.5, renderer: {
          display: (message, report) => report.impression(), withdraw: () => undefined } });
        const gets = () => testkit.requests.filter((request) => request.method === "GET").length;
        testkit.now = start + 60000; // pollAfterSeconds: the next poll is due, and fails
        testkit.answers.feed.push({ status: 500 });
        await herald.tick();
        let failedAt = testkit.now;
        const waits = [];
        for (const answer of [{ networkError: true }, { status: 502 }, { status: 503 }]) {
          testkit.answers.feed.push(answer);
          const before = gets();
          while (gets() === before) {
            testkit.now += 100;
            await herald.tick();
            if (testkit.now - failedAt > 20000) throw new Error("no retry within 20 s");
          }
          waits.push(testkit.now - failedAt);
          failedAt = testkit.now;
        }
        const headers = testkit.requests.filter((request) => request.method === "GET").map((request) => request.headers);
        return { waits, outcome: herald.triggerEvent("show_24").outcome, headers, etag: testkit.etag };
        """,
    )
    assert result["waits"] == [1000, 2000, 4000], "1 s, 2 s, 4 s (no jitter with random 0.5)"
    assert result["outcome"] == "displayed", "the last good feed stays in use"
    first, *later = result["headers"]
    assert first["Authorization"] == "Bearer hrld_test" and first["Accept"] == "application/json"
    assert first["X-Installation-Id"] == "0e9a4b6c-0000-4000-8000-00000000beef" and "If-None-Match" not in first
    assert later and all(headers["If-None-Match"] == result["etag"] for headers in later)


@pytest.mark.parametrize("endpoint, status", [("feed", 401), ("events", 403)])
def test_a_refused_key_stops_polling_and_uploading_and_tells_the_app(page, driver, endpoint, status):
    result = run(
        driver,
        """
        const [endpoint, status] = args;
        testkit.realClock = false;
        testkit.setCampaigns([testkit.campaign(25, { layout: "modal", title: { text: "Hello" } })]);
        if (endpoint === "feed") testkit.answers.feed.push({ status });
        else testkit.answers.events.push({ status });
        const herald = await testkit.start({ renderer: { display: (message, report) => report.impression(), withdraw: () => undefined } });
        herald.triggerEvent("show_25");
        await herald.flush();
        const requests = testkit.requests.length;
        for (let day = 0; day < 3; day += 1) {
          testkit.now += 24 * 3600 * 1000;
          herald.triggerEvent("show_25");
          await herald.tick();
          await herald.flush();
          await herald.refresh();
        }
        return { stopped: testkit.called("stopped"), status: herald.stopped, more: testkit.requests.length - requests };
        """,
        endpoint, status,
    )
    assert result["stopped"] == [{"name": "stopped", "campaignId": None, "local": None, "status": status}]
    assert result["status"] == status and result["more"] == 0


# --- the event queue ---------------------------------------------------------------------------------


def test_the_queue_keeps_the_newest_thousand_and_uploads_in_batches_of_five_hundred(page, driver):
    result = run(
        driver,
        """
        testkit.realClock = false;
        const start = testkit.now;
        testkit.answers.events.push(...Array(3).fill({ status: 503 }));
        testkit.setCampaigns([testkit.campaign(26, { layout: "modal", title: { text: "Hello" } })]);
        const herald = await testkit.start({ random: () => 0.5, renderer: {
          display: (message, report) => { report.impression(); report.dismiss("click"); }, withdraw: () => undefined } });
        for (let i = 0; i < 505; i += 1) {
          herald.triggerEvent("show_26");
          testkit.now += 1;
        }
        const queued = herald.queuedEvents;
        const seen = { length: queued.length, dropped: herald.droppedEvents, oldest: [queued[0].type, Date.parse(queued[0].occurredAt) - start] };
        testkit.answers.events.length = 0;
        testkit.now += 3600 * 1000;
        seen.upload = await herald.flush();
        seen.batches = testkit.requests.filter((request) => request.method === "POST" && request.body).map((request) => request.body.events.length);
        seen.left = herald.queuedEvents.length;
        return seen;
        """,
    )
    assert (result["length"], result["dropped"]) == (1000, 10)
    assert result["oldest"] == ["impression", 5], "the oldest events were the ones dropped"
    assert result["upload"] == {"status": "uploaded", "accepted": 1000, "duplicates": 0, "rejected": 0}
    assert result["batches"][-2:] == [500, 500] and result["left"] == 0


def test_a_batch_refused_as_a_whole_is_dropped_not_retried(page, driver):
    result = run(
        driver,
        """
        testkit.realClock = false;
        testkit.setCampaigns([testkit.campaign(27, { layout: "modal", title: { text: "Hello" } })]);
        const herald = await testkit.start({ renderer: { display: (message, report) => report.impression(), withdraw: () => undefined } });
        herald.triggerEvent("show_27");
        testkit.answers.events.push({ status: 400, body: '{"error": {"code": "invalid", "message": "bad batch"}}' });
        const answer = await herald.flush();
        return { answer, left: herald.queuedEvents.length };
        """,
    )
    assert result["left"] == 0 and result["answer"]["status"] == "uploaded"


# --- storage -----------------------------------------------------------------------------------------


def test_without_local_storage_the_client_works_in_memory_and_says_so(page, driver):
    result = run(
        driver,
        """
        Object.defineProperty(window, "localStorage", { configurable: true, get() { throw new DOMException("The operation is insecure.", "SecurityError"); } });
        testkit.setCampaigns([testkit.campaign(28, { layout: "modal", title: { text: "Once" } }, { frequency: { type: "once" } })]);
        const herald = await testkit.start({ installationId: undefined });
        const first = herald.triggerEvent("show_28");
        await testkit.waitFor(() => testkit.called("displayed").length > 0);
        testkit.host(28).shadowRoot.querySelector("[data-close]").click();
        return { failures: testkit.called("storageFailed"), first: first.outcome, again: herald.triggerEvent("show_28").outcome,
                 installationId: herald.installationId, queued: herald.queuedEvents.map((event) => event.type) };
        """,
    )
    assert result["failures"] == [{"name": "storageFailed", "campaignId": None, "local": None, "error": "SecurityError"}]
    assert (result["first"], result["again"]) == ("displayed", "noMatch"), "frequency is kept in memory"
    assert re.match(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", result["installationId"])
    assert result["queued"] == ["impression", "dismiss"]


def test_a_full_storage_is_reported_once_and_the_client_goes_on(page, driver):
    result = run(
        driver,
        """
        const items = new Map();
        let writes = 0;
        const storage = {
          getItem: (key) => (items.has(key) ? items.get(key) : null),
          setItem: (key, value) => {
            writes += 1;
            if (key.endsWith(".queue")) throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
            items.set(key, value);
          },
          removeItem: (key) => items.delete(key),
        };
        testkit.answers.events.push(...Array(3).fill({ status: 503 }));
        testkit.setCampaigns([testkit.campaign(29, { layout: "modal", title: { text: "Hello" } })]);
        const herald = await testkit.start({ storage, renderer: {
          display: (message, report) => { report.impression(); report.dismiss("auto"); }, withdraw: () => undefined } });
        for (let i = 0; i < 3; i += 1) herald.triggerEvent("show_29");
        return { failures: testkit.called("storageFailed"), queued: herald.queuedEvents.length, keptState: [...items.keys()].some((key) => key.endsWith(".state")) };
        """,
    )
    assert result["failures"] == [{"name": "storageFailed", "campaignId": None, "local": None, "error": "QuotaExceededError"}]
    assert result["queued"] == 6 and result["keptState"]


def test_what_persists_across_pages_is_namespaced_per_server_and_key(page, driver):
    keys = run(
        driver,
        """
        testkit.setCampaigns([testkit.campaign(30, { layout: "modal", title: { text: "Hello" } })]);
        const herald = await testkit.start();
        herald.triggerEvent("show_30");
        await testkit.waitFor(() => testkit.called("displayed").length > 0);
        herald.stop();
        await testkit.start({ apiKey: "hrld_other_app" });
        return Object.keys(localStorage).sort();
        """,
    )
    prefixes = {key.rsplit(".", 1)[0] for key in keys}
    assert len(prefixes) == 2 and all(re.match(r"^herald\.[0-9a-f]+$", prefix) for prefix in prefixes)
    assert {key.rsplit(".", 1)[1] for key in keys} == {"state", "feed", "queue"}


def test_a_new_page_within_the_session_timeout_continues_the_session(page, driver):
    launched = "await testkit.start(args[0] ? { clock: () => Date.now() + args[0] * 1000 } : {}); return testkit.called('noMatchingTrigger').map((call) => call.event);"
    assert run(driver, launched, 0) == ["app_launch", "session_start"]
    driver.refresh()  # the old page is hidden as it unloads: herald.js keeps when
    wait(driver).until(lambda d: d.execute_script("return document.readyState === 'complete' && !!window.testkit"))
    assert run(driver, launched, 0) == ["app_launch"], "a page opened within 10 s continues the session"
    driver.refresh()
    wait(driver).until(lambda d: d.execute_script("return document.readyState === 'complete' && !!window.testkit"))
    assert run(driver, launched, 11) == ["app_launch", "session_start"], "11 s later a new session begins"


# --- data collection ---------------------------------------------------------------------------------


def test_with_data_collection_off_no_installation_id_leaves_and_the_choice_persists(page, driver):
    result = run(
        driver,
        """
        testkit.setCampaigns([testkit.campaign(31, { layout: "modal", title: { text: "Hello" } })]);
        const renderer = { display: (message, report) => report.impression(), withdraw: () => undefined };
        let herald = await testkit.start({ dataCollection: false, renderer });
        herald.triggerEvent("show_31");
        await herald.flush();
        herald.setDataCollection(true);
        herald.stop();
        herald = await testkit.start({ dataCollection: false, renderer });
        herald.triggerEvent("show_31");
        await herald.flush();
        return testkit.requests.map((request) => ({ method: request.method, id: request.headers["X-Installation-Id"] || null,
          events: request.body ? request.body.events.map((event) => event.installationId || null) : null }));
        """,
    )
    off, later = result[:2], result[2:]
    assert off == [{"method": "GET", "id": None, "events": None}, {"method": "POST", "id": None, "events": [None]}]
    installation = "0e9a4b6c-0000-4000-8000-00000000beef"
    assert later == [{"method": "GET", "id": installation, "events": None}, {"method": "POST", "id": None, "events": [installation]}], \
        "the app's later choice persists over the start option"


# --- version patterns --------------------------------------------------------------------------------


REGEX_CAMPAIGNS = """
testkit.setCampaigns([
  testkit.campaign(40, { layout: "modal", title: { text: "Freezes?" } }, { priority: 1, targeting: { appVersion: { op: "regex", value: "(a+)+$" } } }),
  testkit.campaign(41, { layout: "modal", title: { text: "2.4" } }, { priority: 2, targeting: { appVersion: { op: "regex", value: "^2\\\\.4" } },
    triggers: [{ event: "show_40", filters: [] }] }),
]);
let longestPause = 0;
let last = performance.now();
const heartbeat = setInterval(() => { const now = performance.now(); longestPause = Math.max(longestPause, now - last); last = now; }, 10);
const violations = [];
document.addEventListener("securitypolicyviolation", (event) => violations.push(event.effectiveDirective));
const started = performance.now();
const herald = await testkit.start({ appVersion: "2.4-" + "a".repeat(40) + "!", renderer: null });
const tookMs = performance.now() - started;
clearInterval(heartbeat);
herald.setRenderer({ display: () => undefined, withdraw: () => undefined });
return { tookMs, longestPause, violations, chosen: herald.triggerEvent("show_40").campaign };
"""


def test_a_runaway_version_pattern_runs_off_the_page_and_does_not_match(page, driver):
    result = run(driver, REGEX_CAMPAIGNS)
    assert result["chosen"] == 41, "(a+)+$ gave up within its budget: no match; ^2\\.4 matched"
    assert result["tookMs"] < 3000 and result["longestPause"] < 250, result
    assert result["violations"] == []


def test_where_a_policy_forbids_workers_runaway_patterns_are_refused(page, driver):
    page("/csp/app.html")
    result = run(driver, REGEX_CAMPAIGNS)
    assert result["violations"], "the page's policy refused the worker"
    assert result["chosen"] == 41 and result["longestPause"] < 250, result
    # Under the same policy the messages still draw with their styles (no inline styles are needed).
    run(driver, "testkit.herald.stop();")
    show(driver, 42, {"layout": "modal", "title": {"text": "Styled"}, "backgroundColor": "#FFF8E1"})
    seen = measure(driver, 42)
    assert seen["surface"] == "rgb(255, 248, 225)" and seen["box"]["width"] <= 420


# --- what the app does -------------------------------------------------------------------------------


def test_a_local_message_shows_and_nothing_about_it_is_reported(page, driver):
    result = run(
        driver,
        """
        const herald = await testkit.start();
        herald.addToStack({ layout: "banner", title: { text: "Saved for later" }, dismiss: { seconds: 60 } }, [{ key: "source", value: "app" }]);
        const stack = herald.stack;
        herald.displayNext();
        await testkit.waitFor(() => testkit.called("displayed").length > 0);
        testkit.host("local").shadowRoot.querySelector("[data-close]").click();
        return { stack, layout: document.querySelectorAll('[data-herald-message="local"]').length, calls: testkit.calls.map((call) => [call.name, call.local]),
                 queued: herald.queuedEvents.length };
        """,
    )
    assert result["stack"] == [{"campaignId": None, "local": True}]
    assert ["displayed", True] in result["calls"] and ["dismissed", True] in result["calls"]
    assert result["queued"] == 0


def test_a_push_opened_fires_push_click_with_the_campaign_id(page, driver):
    result = run(
        driver,
        """
        testkit.setCampaigns([
          testkit.campaign(43, { layout: "modal", title: { text: "After push 7" } },
            { triggers: [{ event: "push_click", filters: [{ property: "campaign_id", op: "eq", value: 7 }] }] }),
        ]);
        const herald = await testkit.start({ renderer: { display: () => undefined, withdraw: () => undefined } });
        const received = await herald.pushReceived({ herald_campaign_id: 7, aps: { alert: "Sale" } });
        const outcomes = [herald.pushOpened({ herald_campaign_id: "8" }).outcome, herald.pushOpened({ herald_campaign_id: "7" }).outcome];
        herald.pushOpened({});
        return { received, outcomes, events: herald.queuedEvents.map((event) => [event.type, event.campaignId]) };
        """,
    )
    assert result["received"] is None, "an alert fetches nothing"
    assert result["outcomes"] == ["noMatch", "displayed"]
    assert result["events"] == [["push_received", 7], ["push_open", 8], ["push_open", 7]]


def test_a_silent_push_fetches_the_feed_at_once(page, driver):
    result = run(
        driver,
        """
        testkit.setCampaigns([testkit.campaign(1, { layout: "modal", title: { text: "First" } })]);
        const herald = await testkit.start({ renderer: { display: () => undefined, withdraw: () => undefined } });
        testkit.setCampaigns([testkit.campaign(2, { layout: "modal", title: { text: "Published just now" } }, { triggers: [{ event: "sale" }] })]);
        const alert = await herald.pushReceived({ aps: { alert: "Hi", "content-available": 0 } });
        const stillOld = herald.triggerEvent("sale").outcome;
        const silent = await herald.pushReceived({ aps: { "content-available": 1 } });
        const fcm = await herald.pushReceived({ herald_refresh: "1" });
        return { alert, stillOld, silent, fcm, now: herald.triggerEvent("sale").outcome, events: herald.queuedEvents.length };
        """,
    )
    assert result == {"alert": None, "stillOld": "noMatch", "silent": True, "fcm": True, "now": "displayed", "events": 0}


def test_start_refuses_options_it_cannot_use(page, driver):
    errors = run(
        driver,
        """
        const attempts = [{}, { server: "herald.example.com", apiKey: "k" }, { server: "https://h.example", apiKey: "" },
                          { server: "https://h.example", apiKey: "k", sessionTimeoutSeconds: -1 }];
        const errors = [];
        for (const options of attempts) {
          try { await Herald.start(options); errors.push(null); } catch (error) { errors.push(error.name); }
        }
        return errors;
        """,
    )
    assert errors == ["TypeError"] * 4


# --- the two wrappings -------------------------------------------------------------------------------


def test_the_classic_script_sets_only_herald_and_the_module_exports_it(page, driver, herald_js_site):
    classic = run(
        driver,
        """
        return { start: typeof Herald.start, version: Herald.version,
                 leaked: ["Client", "MessageView", "LIMITS", "DEFAULTS", "Store", "start", "readFeed"].filter((name) => name in window) };
        """,
    )
    assert classic == {"start": "function", "version": "1", "leaked": []}
    driver.get(herald_js_site.url("/module.html"))
    wait(driver).until(lambda d: d.execute_script("return !!window.moduleExports"))
    assert driver.execute_script("return [window.moduleExports, 'Herald' in window];") == [
        {"sameObject": True, "start": "function", "version": "1"}, False]
