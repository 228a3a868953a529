"""The campaign and report pages in Persian (right to left) and Japanese, at a phone's and a desk's width.

A server of its own is seeded with `herald demo` (apps, campaigns, 30 days of events). An admin chooses
Persian, then each page is opened at 390 px and at 1440 px wide: the page never scrolls sideways (wide
tables scroll inside their own `.table-wrap`), the document reads right to left, and the page's text
starts on the right. Then the same pages in Japanese take the Japanese font stack.
"""

from __future__ import annotations

import re

import pytest
from browser_helpers import replaced, visible, wait
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

EMAIL, PASSWORD = "rtl-admin@example.com", "rtl-passphrase-1"
WIDTHS = (390, 1440)


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory, herald_cli, herald_serve):
    workdir = tmp_path_factory.mktemp("herald-rtl")
    database = workdir / "herald.sqlite"
    herald_cli("user", "create", "--email", EMAIL, "--role", "admin", "--password-stdin",
               database=database, cwd=workdir, stdin=PASSWORD + "\n")
    herald_cli("demo", "--days", "30", database=database, cwd=workdir)
    with herald_serve(workdir, database) as server:
        yield server


@pytest.fixture(scope="module")
def persian(driver: WebDriver, demo_server):
    # Every test server lives on 127.0.0.1, where cookies ignore the port: start and end clean.
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.get(demo_server.url("/login"))
    visible(driver, "#field-email").send_keys(EMAIL)
    driver.find_element(By.ID, "field-password").send_keys(PASSWORD)
    old_page = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, 'form[action="/login"] button[type="submit"]').click()
    wait(driver).until(replaced(old_page))
    choose_language(driver, demo_server, "fa", "Asia/Tehran")
    yield demo_server
    driver.set_window_size(1280, 900)
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})


def choose_language(driver: WebDriver, server, language: str, zone: str) -> None:
    driver.get(server.url("/account"))
    driver.execute_script(
        "document.getElementById('field-language').value = arguments[0];"
        "document.getElementById('field-time-zone').value = arguments[1];", language, zone)
    old_page = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, 'form[action="/account"] button[type="submit"]').click()
    wait(driver).until(replaced(old_page))
    assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == language


def campaign_paths(driver: WebDriver, server) -> list[str]:
    driver.get(server.url("/campaigns"))
    first = driver.find_element(By.CSS_SELECTOR, "table.data tbody a").get_attribute("href")
    campaign = re.search(r"/campaigns/\d+", first).group(0)
    return ["/campaigns", campaign, campaign + "/history", campaign + "/report", "/reports", "/campaigns/import", "/audit"]


def overflow(driver: WebDriver) -> int:
    """How far the page scrolls sideways, in CSS pixels (0 when it does not)."""
    return driver.execute_script(
        "const root = document.documentElement; return root.scrollWidth - root.clientWidth;")


@pytest.mark.parametrize("width", WIDTHS)
def test_persian_pages_read_right_to_left_without_scrolling_sideways(driver, persian, screenshot, width):
    driver.set_window_size(width, 900)
    for path in campaign_paths(driver, persian):
        driver.get(persian.url(path))
        html = driver.find_element(By.TAG_NAME, "html")
        assert html.get_attribute("dir") == "rtl", path
        assert overflow(driver) <= 0, f"{path} scrolls sideways by {overflow(driver)} px at {width} px"
        main = driver.find_element(By.ID, "main")
        assert driver.execute_script("return getComputedStyle(arguments[0]).direction", main) == "rtl", path
        # The heading starts on the right, even a campaign's name in Latin letters (isolated with dir=auto).
        side = driver.execute_script(
            "const range = document.createRange(); range.selectNodeContents(arguments[0]);"
            "const text = range.getBoundingClientRect(), box = arguments[1].getBoundingClientRect();"
            "return Math.abs(box.right - text.right) < Math.abs(text.left - box.left) ? 'right' : 'left';",
            driver.find_element(By.TAG_NAME, "h1"), main)
        assert side == "right", f"the heading of {path} starts on the {side}"
        screenshot(f"rtl-{width}-{path.strip('/').replace('/', '-') or 'home'}.png")


def test_persian_values_keep_their_own_direction(driver, persian):
    driver.set_window_size(1440, 900)
    path = campaign_paths(driver, persian)[1]
    driver.get(persian.url(path))
    for code in driver.find_elements(By.CSS_SELECTOR, 'dl.details code[dir="ltr"]'):
        assert driver.execute_script("return getComputedStyle(arguments[0]).direction", code) == "ltr"
    font = driver.execute_script("return getComputedStyle(document.body).fontFamily")
    assert "Vazirmatn" in font and "Tahoma" in font, font


def test_japanese_pages_take_the_japanese_font_stack(driver, persian):
    choose_language(driver, persian, "ja", "Asia/Tokyo")
    driver.set_window_size(390, 900)
    for path in campaign_paths(driver, persian)[:4]:
        driver.get(persian.url(path))
        assert driver.find_element(By.TAG_NAME, "html").get_attribute("dir") == "ltr"
        assert overflow(driver) <= 0, f"{path} scrolls sideways by {overflow(driver)} px"
        font = driver.execute_script("return getComputedStyle(document.body).fontFamily")
        assert "Hiragino Sans" in font and "Noto Sans JP" in font, font
