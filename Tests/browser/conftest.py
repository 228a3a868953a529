"""Fixtures for Herald's real-browser end-to-end tests (the server fixtures are in ../conftest.py).

* ``driver`` is a headless Debian Chromium driven by the system chromedriver.
  Selenium Manager is never consulted because the driver path is explicit.
* ``screenshot`` saves PNGs into ``<repo root>/test-artifacts/browser/``.
* ``herald_js_site`` serves herald.js and its test pages on loopback (herald_js_site.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from herald_js_site import HeraldJsSite
from selenium import webdriver

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS_DIR = REPO_ROOT / "test-artifacts" / "browser"

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@pytest.fixture(scope="session")
def driver():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
        "--lang=en-US",
    ):
        options.add_argument(argument)

    # Keep the console's messages, so tests can read them (driver.get_log("browser")).
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})

    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    browser = webdriver.Chrome(service=service, options=options)
    browser.set_page_load_timeout(30)
    yield browser
    browser.quit()


@pytest.fixture(scope="session")
def screenshot(driver):
    """Return a function that saves a full-window PNG under test-artifacts/browser/."""
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)

    def save(name: str) -> Path:
        path = ARTIFACTS_DIR / name
        assert driver.save_screenshot(str(path)), f"could not save screenshot {path}"
        return path

    return save


@pytest.fixture(scope="session")
def herald_js_site():
    """herald.js, wrapped as Herald serves it, with its test pages and images, on a loopback port."""
    site = HeraldJsSite()
    yield site
    site.stop()
