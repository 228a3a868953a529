"""Push set-up on the app page in a real (headless) Chromium with its script running.

An admin picks the APNs .p8 file with the file input (the page's script reads it into the key's field),
types the key and team ids and the topic, and saves: the page says APNs is configured with those ids and
never shows the key again. The same with an FCM service-account file; then a daily cap and silent
refresh; then APNs is removed through its confirmation page. axe finds nothing serious on the page.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from browser_helpers import axe_violations, by_name, submit_with, type_into, visible, wait
from selenium.webdriver.common.by import By

EMAIL, PASSWORD = "push-setup@example.com", "push-setup-passphrase-1"


@pytest.fixture(scope="module")
def setup_herald(tmp_path_factory, herald_cli, herald_serve):
    workdir = tmp_path_factory.mktemp("herald-push-setup")
    database = workdir / "herald.sqlite"
    herald_cli("user", "create", "--email", EMAIL, "--role", "admin", "--password-stdin", database=database, cwd=workdir, stdin=PASSWORD + "\n")
    app_id = herald_cli("app", "create", "--name", "Shop", "--platform", "ios", "--platform", "android", database=database, cwd=workdir).split()[-1]
    # A real APNs key (P-256 in PKCS#8, as Apple issues) and a service account with a real RSA key.
    key = workdir / "AuthKey_ABCDE12345.p8"
    key.write_bytes(subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
                                   capture_output=True, check=True).stdout)
    rsa = subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"], capture_output=True, check=True).stdout.decode()
    account = workdir / "shop-firebase-adminsdk.json"
    account.write_text(json.dumps({
        "type": "service_account", "project_id": "shop-prod", "private_key_id": "0123456789abcdef", "private_key": rsa,
        "client_email": "herald@shop-prod.iam.gserviceaccount.com", "client_id": "1", "token_uri": "https://oauth2.googleapis.com/token",
    }, indent=2))
    with herald_serve(workdir, database) as server:
        yield server, app_id, key, account


@pytest.fixture(scope="module", autouse=True)
def separate_cookies(driver):
    """Every test server lives on 127.0.0.1, where cookies ignore the port: start and end clean."""
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    yield
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})


def pick_file(driver, field_id: str, path) -> str:
    """Chooses `path` in the file input beside `field_id`; waits for the script to fill the field; answers its text."""
    picker = driver.find_element(By.CSS_SELECTOR, f'input[type=file][data-fills="{field_id}"]')
    picker.send_keys(str(path))
    field = driver.find_element(By.ID, field_id)
    wait(driver).until(lambda d: field.get_attribute("value").strip() != "", message=f"{field_id} was not filled from the file")
    return field.get_attribute("value")


def test_set_up_apns_and_fcm_from_files_then_remove_apns(driver, setup_herald):
    server, app_id, key, account = setup_herald
    driver.get(server.url("/login"))
    type_into(driver, "email", EMAIL)
    type_into(driver, "password", PASSWORD)
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, 'form[action="/login"] button[type="submit"]'))
    page = f"/apps/{app_id}"
    driver.get(server.url(page))
    assert "Not set up: iOS devices get no push campaigns" in driver.page_source

    # APNs from the .p8 file
    assert pick_file(driver, "field-apnsKey", key) == key.read_text()
    type_into(driver, "apnsKeyID", "ABCDE12345")
    type_into(driver, "apnsTeamID", "TEAM123456")
    type_into(driver, "apnsTopic", "com.example.shop")
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, f'form[action="{page}/push/apns"] button[type="submit"]'))
    assert "APNs is set up for" in visible(driver, ".flash").text
    panel = driver.find_element(By.ID, "push")
    assert "Configured" in panel.text and "ABCDE12345" in panel.text and "TEAM123456" in panel.text and "https://api.push.apple.com" in panel.text
    key_body = key.read_text().splitlines()[1]
    assert key_body not in driver.page_source and driver.find_element(By.ID, "field-apnsKey").get_attribute("value") == ""

    # FCM from the service-account file
    pick_file(driver, "field-fcmServiceAccount", account)
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, f'form[action="{page}/push/fcm"] button[type="submit"]'))
    panel = driver.find_element(By.ID, "push")
    assert "shop-prod" in panel.text and "herald@shop-prod.iam.gserviceaccount.com" in panel.text
    assert "private_key" not in driver.page_source

    # A mistake in the cap is shown at its field, then a good cap and silent refresh are kept
    type_into(driver, "pushDailyCap", "500")
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, f'form[action="{page}/push/settings"] button[type="submit"]'))
    assert "from 1 to 100" in visible(driver, "#field-pushDailyCap-error").text
    type_into(driver, "pushDailyCap", "3")
    checkbox = driver.find_element(By.ID, "field-refreshOnChange-on")
    if not checkbox.is_selected():
        driver.execute_script("arguments[0].click()", checkbox)
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, f'form[action="{page}/push/settings"] button[type="submit"]'))
    assert by_name(driver, "pushDailyCap").get_attribute("value") == "3"
    assert driver.find_element(By.ID, "field-refreshOnChange-on").is_selected()

    violations = axe_violations(driver)
    assert not violations, json.dumps(violations, indent=2)

    # Removing APNs asks first
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, f'a[href="{page}/push/apns/remove"]'))
    assert driver.find_element(By.TAG_NAME, "h1").text.startswith("Remove APNs from")
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, f'form[action="{page}/push/apns/remove"] button[type="submit"]'))
    assert "Not set up: iOS devices get no push campaigns" in driver.find_element(By.ID, "push").text
    assert "shop-prod" in driver.find_element(By.ID, "push").text, "FCM stays"
