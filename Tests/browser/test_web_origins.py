"""The app page's web origins and the web client's demo page, in a real (headless) Chromium.

* Origins: an admin adds an origin, meets a refusal next to the field, and removes an origin after its
  confirmation page, all with the keyboard alone (Tab to reach a control, Enter to use it); axe-core
  finds no serious or critical violation on the section, the refusal or the confirmation.
* Demo page: its own script, against a small stand-in for herald.js served by this Herald (the real
  client is tested with its own suite): the key is checked with Herald and kept in localStorage, the
  installation id the client reports is shown, app_launch, custom events (with JSON properties) and
  purchases reach the client, mistakes are named next to their field, and a reload starts again with
  the stored key. A Herald without the web client says so instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_helpers import AXE_RUN_JS, axe_source, current_path, replaced, visible, wait
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

EMAIL = "origins-admin@example.com"
PASSWORD = "origins-passphrase-1"
APP_NAME = "Shop"
SHOP_ORIGIN = "https://shop.example.com"

# A stand-in for herald.js with the surface the demo page uses: Herald.start resolves to a client with
# installationId and triggerEvent. It records what the page asked, for the test to read.
FAKE_CLIENT = """
const Herald = {
  async start(options) {
    globalThis.heraldCalls = { start: { server: options.server, apiKey: options.apiKey }, events: [] };
    return {
      installationId: "iid-demo-browser",
      triggerEvent(name, properties) { globalThis.heraldCalls.events.push([name, properties]); },
    };
  },
};
"""


@pytest.fixture(scope="module")
def origins_herald(tmp_path_factory, herald_cli, herald_serve):
    workdir = tmp_path_factory.mktemp("herald-origins")
    database = workdir / "herald.sqlite"
    web_client = workdir / "web-client"
    web_client.mkdir()
    (web_client / "herald.js").write_text(FAKE_CLIENT, encoding="utf-8")
    herald_cli("user", "create", "--email", EMAIL, "--role", "admin", "--password-stdin",
               database=database, cwd=workdir, stdin=PASSWORD + "\n")
    app_id = int(herald_cli("app", "create", "--name", APP_NAME, "--platform", "web", database=database, cwd=workdir).split()[-1])
    key = herald_cli("key", "create", "--app", str(app_id), "--name", "web", "--scope", "feed:read", "--scope", "events:write",
                     database=database, cwd=workdir).split()[-1]
    narrow = herald_cli("key", "create", "--app", str(app_id), "--name", "feed only", "--scope", "feed:read",
                        database=database, cwd=workdir).split()[-1]
    with herald_serve(workdir, database, "--web-client", str(web_client)) as server:
        yield {"server": server, "app_id": app_id, "key": key, "narrow_key": narrow}


def axe_problems(driver) -> list[str]:
    driver.execute_script(axe_source())
    return [f"{v['impact']} {v['id']} ({v['help']}): " + "; ".join(v["nodes"]) for v in driver.execute_async_script(AXE_RUN_JS)]


def tab_to(driver, matches, limit: int = 80):
    """Presses Tab until the focused element satisfies `matches` (a person reaching a control by keyboard)."""
    for _ in range(limit):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        focused = driver.switch_to.active_element
        if matches(focused):
            return focused
    pytest.fail("Tab never reached the control", pytrace=False)


def press_enter_and_wait(driver) -> None:
    old = driver.find_element(By.TAG_NAME, "html")
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait(driver).until(replaced(old), message="Enter did not lead to the next page")


def sign_in(driver, server) -> None:
    driver.delete_all_cookies()
    driver.get(server.url("/login"))
    visible(driver, "input[name=email]").send_keys(EMAIL)
    driver.find_element(By.CSS_SELECTOR, "input[name=password]").send_keys(PASSWORD)
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, "form[action='/login'] [type=submit]").click()
    wait(driver).until(replaced(old), message="sign-in did not leave the login page")


def test_origins_are_added_refused_and_removed_with_the_keyboard(driver, origins_herald):
    server, app_id = origins_herald["server"], origins_herald["app_id"]
    sign_in(driver, server)
    page = f"/apps/{app_id}"
    driver.get(server.url(page))
    section = visible(driver, "#web-origins")
    assert "No web origins yet" in section.text
    assert axe_problems(driver) == []

    # Add one by keyboard: Tab to the field, type, Enter
    field = tab_to(driver, lambda element: element.get_attribute("name") == "origin")
    field.send_keys("HTTPS://Shop.Example.com/")
    press_enter_and_wait(driver)
    assert current_path(driver) == page
    listed = [code.text for code in driver.find_elements(By.CSS_SELECTOR, "#web-origins td code")]
    assert listed == [SHOP_ORIGIN]
    assert "may now use the keys of" in visible(driver, ".flash").text

    # A mistake: refused next to the field, the summary takes the focus and leads to the field
    field = tab_to(driver, lambda element: element.get_attribute("name") == "origin")
    field.send_keys("http://shop.example.com")
    press_enter_and_wait(driver)
    error = visible(driver, "#field-origin-error")
    assert "http:// is allowed only for localhost" in error.text
    field = driver.find_element(By.ID, "field-origin")
    assert field.get_attribute("aria-invalid") == "true"
    assert "field-origin-error" in field.get_attribute("aria-describedby")
    assert field.get_attribute("value") == "http://shop.example.com"
    summary = driver.switch_to.active_element
    assert "error-summary" in (summary.get_attribute("class") or ""), "the error summary does not take the focus"
    link = summary.find_element(By.CSS_SELECTOR, "a")
    assert link.get_attribute("href").endswith("#field-origin")
    assert axe_problems(driver) == []

    # Remove it: Tab to its Remove link, Enter; on the confirmation page Tab to the button, Enter
    driver.get(server.url(page))
    tab_to(driver, lambda element: element.tag_name == "a" and "/origins/" in (element.get_attribute("href") or ""))
    press_enter_and_wait(driver)
    assert current_path(driver).endswith("/remove")
    assert SHOP_ORIGIN in visible(driver, "h1").text
    assert axe_problems(driver) == []
    tab_to(driver, lambda element: element.tag_name == "button" and element.get_attribute("type") == "submit"
           and "button-danger" in (element.get_attribute("class") or ""))
    press_enter_and_wait(driver)
    assert current_path(driver) == page
    assert "No web origins yet" in visible(driver, "#web-origins").text
    driver.delete_all_cookies()


def demo_calls(driver) -> dict:
    return driver.execute_script("return globalThis.heraldCalls || null")


def status_text(driver) -> str:
    return visible(driver, "#demo-status").text


def test_the_demo_page_keeps_the_key_shows_the_installation_and_fires_events(driver, origins_herald):
    server, key = origins_herald["server"], origins_herald["key"]
    driver.delete_all_cookies()
    driver.get(server.url("/sdk/v1/demo"))
    driver.execute_script("localStorage.clear()")
    driver.get(server.url("/sdk/v1/demo"))
    wait(driver).until(lambda d: status_text(d) == "Paste a key to start.", message="the demo's script did not run")
    assert driver.find_element(By.ID, "demo-events").get_attribute("disabled") is not None
    assert axe_problems(driver) == []

    # An empty key is named next to the field; a key without events:write is explained
    key_field = tab_to(driver, lambda element: element.get_attribute("id") == "demo-key")
    key_field.send_keys(Keys.ENTER)
    assert "Paste the app's API key." in visible(driver, "#demo-key-error").text
    key_field.send_keys(origins_herald["narrow_key"], Keys.ENTER)
    wait(driver).until(lambda d: "lacks the scopes events:write" in status_text(d), message=status_text(driver))
    assert demo_calls(driver) is None

    # A good key: checked with Herald, kept in this browser, handed to the client
    key_field.clear()
    key_field.send_keys(key, Keys.ENTER)
    wait(driver).until(lambda d: status_text(d).startswith("Started with a key of"), message=status_text(driver))
    assert "Shop" in status_text(driver)
    assert driver.execute_script("return localStorage.getItem('herald.demo.apiKey')") == key
    assert demo_calls(driver)["start"] == {"server": server.base_url, "apiKey": key}
    assert visible(driver, "#demo-installation").text == "iid-demo-browser"
    assert driver.find_element(By.ID, "demo-events").get_attribute("disabled") is None

    # Events by keyboard: app_launch, a custom event with properties, a purchase
    tab_to(driver, lambda element: element.get_attribute("data-fire") == "app_launch").send_keys(Keys.ENTER)
    event = tab_to(driver, lambda element: element.get_attribute("id") == "demo-event")
    event.send_keys("1abc", Keys.ENTER)
    assert "An event ID starts with a letter" in visible(driver, "#demo-event-error").text
    assert driver.switch_to.active_element == event
    event.clear()
    event.send_keys("level_up")
    properties = driver.find_element(By.ID, "demo-properties")
    properties.send_keys("[1, 2]")
    event.send_keys(Keys.ENTER)
    assert "JSON object" in visible(driver, "#demo-properties-error").text
    properties.clear()
    properties.send_keys('{"plan": "gold", "level": 3}')
    event.send_keys(Keys.ENTER)
    wait(driver).until(lambda d: status_text(d) == "Fired level_up.", message=status_text(driver))
    assert not driver.find_element(By.ID, "demo-event-error").is_displayed()
    driver.find_element(By.ID, "demo-product").send_keys("sku_1")
    price = driver.find_element(By.ID, "demo-price")
    price.send_keys("9,99", Keys.ENTER)
    assert "as a number" in visible(driver, "#demo-price-error").text
    price.clear()
    price.send_keys("9.99", Keys.ENTER)
    wait(driver).until(lambda d: status_text(d) == "Fired purchase.", message=status_text(driver))
    assert demo_calls(driver)["events"] == [
        ["app_launch", {}], ["level_up", {"plan": "gold", "level": 3}], ["purchase", {"product_id": "sku_1", "value": 9.99}],
    ]
    assert axe_problems(driver) == []

    # A reload starts again with the stored key; forgetting it empties the storage
    driver.refresh()
    wait(driver).until(lambda d: status_text(d).startswith("Started with a key of"), message=status_text(driver))
    assert visible(driver, "#demo-key").get_attribute("value") == key
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.ID, "demo-forget").send_keys(Keys.ENTER)
    wait(driver).until(replaced(old), message="forgetting the key did not start a fresh page")
    wait(driver).until(lambda d: status_text(d) == "Paste a key to start.", message=status_text(driver))
    assert driver.execute_script("return localStorage.getItem('herald.demo.apiKey')") is None


def test_the_demo_page_says_when_this_herald_has_no_web_client(driver, tmp_path_factory, herald_cli, herald_serve):
    workdir = tmp_path_factory.mktemp("herald-no-client")
    database = workdir / "herald.sqlite"
    app_id = herald_cli("app", "create", "--name", "Shop", "--platform", "web", database=database, cwd=workdir).split()[-1]
    key = herald_cli("key", "create", "--app", app_id, "--scope", "feed:read", "--scope", "events:write",
                     database=database, cwd=workdir).split()[-1]
    empty = workdir / "no-web-client"
    empty.mkdir()
    with herald_serve(workdir, database, "--web-client", str(empty)) as server:
        driver.get(server.url("/sdk/v1/demo"))
        driver.execute_script("localStorage.setItem('herald.demo.apiKey', arguments[0])", key)
        driver.refresh()
        wait(driver).until(lambda d: "does not serve the web client" in status_text(d), message=status_text(driver))
        driver.execute_script("localStorage.clear()")
        log = Path(server.log_path).read_text()
    assert "the web client's source" in log and str(empty / "herald.js") in log
