"""Helpers every browser test uses: waiting, the current path, a visible element, typing and clicking in forms."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from selenium.common.exceptions import ElementClickInterceptedException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

WAIT_SECONDS = 10


def wait(driver: WebDriver, seconds: float = WAIT_SECONDS) -> WebDriverWait:
    return WebDriverWait(driver, seconds)


def current_path(driver: WebDriver) -> str:
    return urlparse(driver.current_url).path


def visible(driver: WebDriver, css: str) -> WebElement:
    return wait(driver).until(
        EC.visibility_of_element_located((By.CSS_SELECTOR, css)),
        message=f"expected a visible {css}",
    )


def replaced(old_page: WebElement):
    """A wait condition: the page that held `old_page` has been replaced by the next one. Like
    `EC.staleness_of`, but Chromium sometimes reports an element of an unloaded page as "Node with given
    id does not belong to the document" rather than stale, and that means the same."""

    def check(_driver: WebDriver) -> bool:
        try:
            old_page.is_enabled()
            return False
        except WebDriverException:  # StaleElementReferenceException is one too
            return True

    return check


def by_name(driver: WebDriver, name: str) -> WebElement:
    return driver.find_element(By.CSS_SELECTOR, f'[name="{name}"]')


def scroll_to(driver: WebDriver, element: WebElement) -> WebElement:
    # herald.css turns on smooth scrolling; jump instantly so clicks do not land mid-scroll.
    driver.execute_script("arguments[0].scrollIntoView({block: 'center', behavior: 'instant'})", element)
    return element


def click(driver: WebDriver, element: WebElement) -> None:
    scroll_to(driver, element)
    wait(driver).until(EC.element_to_be_clickable(element)).click()


def type_into(driver: WebDriver, name: str, value: str) -> WebElement:
    field = by_name(driver, name)
    scroll_to(driver, field)
    wait(driver).until(EC.visibility_of(field), message=f"{name} is not visible")
    field.clear()
    field.send_keys(value)
    return field


def submit_with(driver: WebDriver, element: WebElement) -> None:
    """Click a submit button and wait for the next page to replace this one."""
    old_page = driver.find_element(By.TAG_NAME, "html")
    scroll_to(driver, element)
    try:
        wait(driver).until(EC.element_to_be_clickable(element)).click()
    except ElementClickInterceptedException:
        # Last resort, for submit buttons only: the sticky bar covered it.
        driver.execute_script("arguments[0].click()", element)
    wait(driver).until(replaced(old_page), message="the form was not submitted")


# axe-core (shipped by selenium-axe-python): load `axe_source()` into the page, then run this with
# execute_async_script; it answers the serious and critical violations, four nodes each at most.
AXE_RUN_JS = r"""
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ["violations"]}).then((results) => {
  done(results.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 4).map((n) => n.target.join(" ") + (n.failureSummary ? " — " + n.failureSummary.split("\n").slice(1, 2).join("") : "")),
    count: v.nodes.length,
  })));
}).catch((error) => done([{id: "axe-error", impact: "critical", help: String(error), nodes: [], count: 0}]));
"""


def axe_source() -> str:
    import selenium_axe_python

    return (Path(selenium_axe_python.__file__).parent / "axe-core" / "axe.min.js").read_text(encoding="utf-8")


def axe_violations(driver: WebDriver) -> list:
    """axe-core's serious and critical findings on the page."""
    driver.execute_script(axe_source())
    return driver.execute_async_script(AXE_RUN_JS)
