"""Helpers every browser test uses: waiting, the current path, a visible element."""

from __future__ import annotations

from urllib.parse import urlparse

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
