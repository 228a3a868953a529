"""A push campaign end to end, as a marketer and the devices meet it: 1,000 Persian-speaking
installations registered through the API, a campaign with a Persian default and an English version
created through the API (test_push_composer.py composes one in the browser) and published on its page,
sent through the mock APNs; in the browser, with the console in Persian, the campaign page follows
the send to its end, the preview shows the notification right to left, and after `herald simulate`
reports devices receiving and opening it, the report shows the figures.
"""

from __future__ import annotations

import collections
import subprocess

import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By

from browser_helpers import axe_violations, replaced, visible, wait
from push_providers import REPO_ROOT, UNLIMITED_REGISTRATIONS, api, give_app_the_mock, mock_providers, register_installations

EMAIL, PASSWORD = "push-admin@example.com", "push-passphrase-1"
INSTALLATIONS = 1000


@pytest.fixture(scope="module")
def push_server(tmp_path_factory, herald_cli, herald_serve):
    workdir = tmp_path_factory.mktemp("herald-push")
    database = workdir / "herald.sqlite"
    herald_cli("user", "create", "--email", EMAIL, "--role", "admin", "--password-stdin", database=database, cwd=workdir, stdin=PASSWORD + "\n")
    herald_cli("app", "create", "--name", "فروشگاه", "--platform", "ios", database=database, cwd=workdir)
    key = herald_cli("key", "create", "--app", "1", "--scope", "events:write", "--scope", "feed:read", "--scope", "campaigns:write",
                     "--scope", "campaigns:read", database=database, cwd=workdir).split()[-1]
    with mock_providers(workdir / "mock") as mock:
        give_app_the_mock(herald_cli, database, workdir, "1", mock)
        with herald_serve(workdir, database, "--push-trust-roots", mock.certificate, "--push-rate", "500", *UNLIMITED_REGISTRATIONS) as server:
            yield server, key, mock


def test_a_persian_push_campaign_is_sent_to_a_thousand_devices_followed_previewed_and_reported(driver, push_server, herald_binary):
    server, key, mock = push_server
    tokens = register_installations(server.base_url, key, INSTALLATIONS, language="fa")
    status, created = api(server.base_url, "POST", "/api/v1/campaigns", key, {
        "app": 1, "name": "حراج پاییز", "channel": "push",
        "push": {"title": "حراج پاییز", "body": "نیم‌بها، فقط امروز", "imageUrl": "https://cdn.example.com/sale.png",
                 "translations": {"en": {"title": "Autumn sale", "body": "Half price, today only"}}},
        "data": [{"key": "screen", "value": "sale"}]})
    assert status == 201, created
    campaign = created["id"]

    # Sign in and choose Persian.
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.get(server.url("/login"))
    visible(driver, "#field-email").send_keys(EMAIL)
    driver.find_element(By.ID, "field-password").send_keys(PASSWORD)
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, 'form[action="/login"] button[type="submit"]').click()
    wait(driver).until(replaced(old))
    driver.get(server.url("/account"))
    driver.execute_script("document.getElementById('field-language').value = 'fa'; document.getElementById('field-time-zone').value = 'Asia/Tehran';")
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, 'form[action="/account"] button[type="submit"]').click()
    wait(driver).until(replaced(old))

    # Publish from the campaign page, as a marketer would, and watch the send go to its end.
    driver.get(server.url(f"/campaigns/{campaign}"))
    assert driver.find_element(By.TAG_NAME, "html").get_attribute("dir") == "rtl"
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, f'form[action="/campaigns/{campaign}/publish"] button').click()
    wait(driver).until(replaced(old))
    bar = visible(driver, "[data-push-progress] progress")
    seen = {int(bar.get_attribute("value"))}
    # The page's script updates the bar every 2 s and loads the page once more when the send is done.
    def finished(d):
        try:
            section = d.find_element(By.CSS_SELECTOR, "[data-push-progress]")
            seen.add(int(section.find_element(By.TAG_NAME, "progress").get_attribute("value")))
            return section.get_attribute("data-done") == "true"
        except (NoSuchElementException, StaleElementReferenceException):
            return False  # the page is being loaded again
    wait(driver, 120).until(finished, message="the campaign page never showed the send as done")
    assert len(seen) > 1, f"the bar moved while sending: {sorted(seen)}"
    sent = driver.find_element(By.CSS_SELECTOR, '[data-push-count="sent"]').text
    assert sent == "۱٬۰۰۰", f"1,000 in Persian digits: {sent!r}"

    per_token = collections.Counter(r["path"].removeprefix("/3/device/") for r in mock.device_requests())
    assert set(per_token) == set(tokens) and max(per_token.values()) == 1
    persian_body = next(r["body"] for r in mock.device_requests())
    assert "نیم‌بها، فقط امروز" in persian_body and '"herald_campaign_id":%d' % campaign in persian_body

    # The preview: lock screens right to left for the Persian default, left to right for English.
    driver.get(server.url(f"/campaigns/{campaign}/preview"))
    cards = driver.find_elements(By.CSS_SELECTOR, ".push-card")
    assert len(cards) == 8
    assert all(card.value_of_css_property("direction") == "rtl" for card in cards), "Persian text lays out right to left"
    driver.get(server.url(f"/campaigns/{campaign}/preview?language=en"))
    assert driver.find_element(By.CSS_SELECTOR, ".push-card").value_of_css_property("direction") == "ltr"
    assert "Autumn sale" in driver.find_element(By.CSS_SELECTOR, ".push-card").text

    assert not axe_violations(driver), axe_violations(driver)

    # Devices report receiving it, and 30 of 100 open it.
    subprocess.run([str(herald_binary), "simulate", "--url", server.base_url, "--key", key, "--devices", "100", "--seconds", "3",
                    "--push-campaign", str(campaign), "--open-pushes", "0.3"], check=True, capture_output=True, timeout=120, cwd=REPO_ROOT)
    driver.get(server.url(f"/campaigns/{campaign}/report"))
    figures = {m.find_element(By.TAG_NAME, "dt").text: m.find_element(By.CSS_SELECTOR, "dd.metric-value").text
               for m in driver.find_elements(By.CSS_SELECTOR, ".report-push .metric")}
    assert list(figures.values())[:5] == ["۱٬۰۰۰", "۱٬۰۰۰", "۰", "۱۰۰", "۳۰"], figures
    assert not axe_violations(driver), axe_violations(driver)
    driver.get(server.url(f"/campaigns/{campaign}"))
    assert not axe_violations(driver), axe_violations(driver)

