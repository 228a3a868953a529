"""Helpers every browser test uses: waiting, the current path, a visible element."""

from __future__ import annotations

from urllib.parse import urlparse

from selenium.common.exceptions import WebDriverException
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
