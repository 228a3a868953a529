"""First-run journey through Herald in a real (headless) Chromium.

The tests share one fresh server and one browser session and run in file
order: each step starts where the previous one left off (fresh database ->
setup -> signed in -> signed out -> signed in again).
"""

from __future__ import annotations

from urllib.parse import urlparse

from browser_helpers import current_path, replaced, visible, wait
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions as EC

ADMIN_NAME = "مریم رضایی"
ADMIN_EMAIL = "maryam@example.com"
ADMIN_PASSWORD = "a-long-enough-passphrase"
SHORT_PASSWORD = "short"
WRONG_PASSWORD = "not-the-right-passphrase"
NEW_PASSWORD = "an-even-longer-passphrase"

SETUP_FORM = 'form[action="/setup"]'
LOGIN_FORM = 'form[action="/login"]'
LOGOUT_FORM = 'form[action="/logout"]'
PASSWORD_FORM = 'form[action="/account/password"]'


# --- helpers -----------------------------------------------------------------

def wait_for_path(driver: WebDriver, path: str) -> None:
    wait(driver).until(
        lambda d: current_path(d) == path,
        message=f"expected to reach {path}",
    )


def fill(driver: WebDriver, css: str, value: str) -> None:
    field = visible(driver, css)
    field.clear()
    field.send_keys(value)


def submit(driver: WebDriver, form_css: str) -> None:
    """Click the form's submit button and wait until the next page has replaced this one."""
    form = visible(driver, form_css)
    assert form.find_elements(By.CSS_SELECTOR, 'input[type="hidden"][name="csrf_token"]'), (
        f"{form_css} has no csrf_token field"
    )
    button = form.find_element(By.CSS_SELECTOR, 'button[type="submit"]')
    # herald.css turns on `scroll-behavior: smooth`, so a click that has to scroll
    # the button into view can land while the page is still moving. Bring it into
    # view instantly first, the way a user would already have scrolled to it.
    driver.execute_script(
        "arguments[0].scrollIntoView({block: 'center', behavior: 'instant'})", button
    )
    old_page = driver.find_element(By.TAG_NAME, "html")
    wait(driver).until(EC.element_to_be_clickable(button)).click()
    wait(driver).until(replaced(old_page), message=f"{form_css} was not submitted")


def assert_campaigns_empty_state(driver: WebDriver) -> None:
    wait_for_path(driver, "/campaigns")
    assert visible(driver, "h1").text == "Campaigns"
    empty_state = visible(driver, "div.empty-state")
    assert empty_state.find_element(By.TAG_NAME, "h2").text == "No campaigns yet"


def assert_stylesheet_applied(driver: WebDriver) -> None:
    """herald.css moves the skip link off-screen; unstyled HTML would leave it in the flow."""
    stylesheets = driver.execute_script("return document.styleSheets.length")
    assert stylesheets >= 1, "herald.css was not loaded"
    skip_link = driver.find_element(By.CSS_SELECTOR, ".skip-link")
    assert driver.execute_script(
        "return getComputedStyle(arguments[0]).position", skip_link
    ) != "static", "the skip link is unstyled; is /public/css/herald.css served?"


# --- the journey ---------------------------------------------------------------

def test_fresh_instance_requires_setup_and_rejects_a_short_password(
    driver, herald_server, screenshot
):
    # Given a Herald instance with a brand-new database
    # When a visitor opens the home page
    driver.get(herald_server.url("/"))

    # Then they are sent to the first-run setup form
    wait_for_path(driver, "/setup")
    visible(driver, SETUP_FORM)
    assert_stylesheet_applied(driver)
    screenshot("setup.png")

    # When they submit a password shorter than 10 characters
    fill(driver, "#field-name", ADMIN_NAME)
    fill(driver, "#field-email", ADMIN_EMAIL)
    fill(driver, "#field-password", SHORT_PASSWORD)
    fill(driver, "#field-password-confirmation", SHORT_PASSWORD)
    submit(driver, SETUP_FORM)

    # Then the form is shown again with an error summary and a password field error
    wait_for_path(driver, "/setup")
    summary = visible(driver, ".error-summary")
    assert summary.get_attribute("role") == "alert"
    password_error = visible(driver, "#field-password-error")
    assert password_error.text.strip(), "the password field error is empty"
    assert (
        driver.find_element(By.ID, "field-password").get_attribute("aria-invalid") == "true"
    )

    # And what they typed in name and email is kept
    assert driver.find_element(By.ID, "field-name").get_attribute("value") == ADMIN_NAME
    assert driver.find_element(By.ID, "field-email").get_attribute("value") == ADMIN_EMAIL
    screenshot("setup-error.png")


def test_completing_setup_signs_in_the_first_admin(driver, herald_server, screenshot):
    # Given the setup form re-rendered after the short-password error
    wait_for_path(driver, "/setup")

    # When the visitor completes it with a valid password
    fill(driver, "#field-name", ADMIN_NAME)
    fill(driver, "#field-email", ADMIN_EMAIL)
    fill(driver, "#field-password", ADMIN_PASSWORD)
    fill(driver, "#field-password-confirmation", ADMIN_PASSWORD)
    submit(driver, SETUP_FORM)

    # Then they land on an empty campaigns page with a welcome message
    assert_campaigns_empty_state(driver)
    assert visible(driver, "div.flash.flash-success").text.strip()

    # And the header shows their Persian name exactly as entered, with a sign-out button
    user_menu = visible(driver, "div.user-menu")
    assert user_menu.find_element(By.CSS_SELECTOR, ".user-name").text == ADMIN_NAME
    sign_out = user_menu.find_element(By.CSS_SELECTOR, f"{LOGOUT_FORM} button")
    assert sign_out.text == "Sign out"
    assert_stylesheet_applied(driver)
    screenshot("campaigns-empty.png")


def test_sign_out_and_sign_back_in(driver, herald_server, screenshot):
    # Given the admin is signed in on the campaigns page
    wait_for_path(driver, "/campaigns")

    # When they sign out
    submit(driver, LOGOUT_FORM)

    # Then they see the login page confirming it
    wait(driver).until(
        lambda d: current_path(d) == "/login" and "signed_out=1" in urlparse(d.current_url).query,
        message="expected /login?signed_out=1",
    )
    assert "You have signed out." in visible(driver, "main").text
    screenshot("login-signed-out.png")

    # When they sign in with the wrong password
    fill(driver, "#field-email", ADMIN_EMAIL)
    fill(driver, "#field-password", WRONG_PASSWORD)
    submit(driver, LOGIN_FORM)

    # Then an error is announced and the email is kept
    login_error = visible(driver, "#login-error")
    assert login_error.get_attribute("role") == "alert"
    assert login_error.text.strip()
    assert driver.find_element(By.ID, "field-email").get_attribute("value") == ADMIN_EMAIL
    assert not driver.find_elements(By.CSS_SELECTOR, "div.user-menu")
    screenshot("login-error.png")

    # When they sign in with the right password
    fill(driver, "#field-email", ADMIN_EMAIL)
    fill(driver, "#field-password", ADMIN_PASSWORD)
    submit(driver, LOGIN_FORM)

    # Then they are back on the empty campaigns page, signed in
    assert_campaigns_empty_state(driver)
    assert visible(driver, "div.user-menu .user-name").text == ADMIN_NAME
    screenshot("campaigns-after-login.png")


def press_enter_in(driver: WebDriver, css: str) -> None:
    """Submit a form from the keyboard, with Enter in one of its fields, and wait for the next page."""
    old_page = driver.find_element(By.TAG_NAME, "html")
    visible(driver, css).send_keys(Keys.ENTER)
    wait(driver).until(replaced(old_page), message=f"Enter in {css} did not submit the form")


def test_changing_the_password_from_settings_by_keyboard(driver, herald_server, screenshot):
    # Given the admin signed in on the campaigns page
    wait_for_path(driver, "/campaigns")

    # When they follow "Settings" in the user menu, then "Change your password" there
    link = visible(driver, 'div.user-menu a[href="/account"]')
    assert link.text == "Settings"
    link.send_keys(Keys.ENTER)
    wait_for_path(driver, "/account")
    link = visible(driver, 'main a[href="/account/password"]')
    assert link.text == "Change your password"
    link.send_keys(Keys.ENTER)
    wait_for_path(driver, "/account/password")
    visible(driver, PASSWORD_FORM)

    # And type a wrong current password, submitting with Enter
    fill(driver, "#field-current-password", WRONG_PASSWORD)
    fill(driver, "#field-password", NEW_PASSWORD)
    fill(driver, "#field-password-confirmation", NEW_PASSWORD)
    press_enter_in(driver, "#field-password-confirmation")

    # Then the summary is announced, links to the field, and the field says what is wrong
    summary = visible(driver, ".error-summary")
    assert summary.get_attribute("role") == "alert"
    assert summary.find_element(By.CSS_SELECTOR, "a").get_attribute("href").endswith("#field-current-password")
    current = driver.find_element(By.ID, "field-current-password")
    assert current.get_attribute("aria-invalid") == "true"
    error = visible(driver, "#field-current-password-error")
    assert "not your current password" in error.text
    assert "field-current-password-error" in current.get_attribute("aria-describedby")
    assert current.get_attribute("value") == "", "a typed password is never sent back"
    screenshot("password-error.png")

    # When they type the right one
    fill(driver, "#field-current-password", ADMIN_PASSWORD)
    fill(driver, "#field-password", NEW_PASSWORD)
    fill(driver, "#field-password-confirmation", NEW_PASSWORD)
    press_enter_in(driver, "#field-password-confirmation")

    # Then they stay signed in and are told the password changed
    wait_for_path(driver, "/account/password")
    assert "Your password is changed" in visible(driver, "div.flash.flash-success").text
    screenshot("password-changed.png")

    # And after signing out, only the new password signs them in
    submit(driver, LOGOUT_FORM)
    fill(driver, "#field-email", ADMIN_EMAIL)
    fill(driver, "#field-password", NEW_PASSWORD)
    submit(driver, LOGIN_FORM)
    assert_campaigns_empty_state(driver)


def test_skip_link_is_the_first_tab_stop_on_the_login_page(driver, herald_server, screenshot):
    # Given a signed-out visitor on the login page
    driver.delete_all_cookies()
    driver.get(herald_server.url("/login"))
    wait_for_path(driver, "/login")
    visible(driver, LOGIN_FORM)
    skip_link = driver.find_element(By.CSS_SELECTOR, "a.skip-link")
    assert skip_link.get_attribute("href").endswith("#main")

    # When they press TAB once from the top of the page
    ActionChains(driver).send_keys(Keys.TAB).perform()

    # Then the skip link has keyboard focus (and is shown on screen)
    wait(driver).until(
        lambda d: d.execute_script("return document.activeElement") == skip_link,
        message="the first TAB did not focus the skip link",
    )
    # (its slide-in is a short CSS transition, so wait for it to become visible)
    wait(driver).until(EC.visibility_of(skip_link), message="the focused skip link stayed hidden")
    screenshot("login-skip-link-focused.png")
