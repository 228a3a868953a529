"""The campaign composer in a real (headless) Chromium, with its script running.

The tests share one seeded server (an admin and the app "Shop", created with the
CLI) and one browser session, and run in file order: log in and try the layouts,
compose and publish a card, edit it, read its history, then fail to publish a
broken one.
"""

from __future__ import annotations

import re

import pytest
from browser_helpers import by_name, click, current_path, replaced, scroll_to, submit_with, type_into, visible, wait
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

LAYOUTS = ["card", "modal", "image_only", "banner", "slideup", "fullscreen"]
TITLE = "Spring sale"
NEW_TITLE = "Spring sale — last days"
DATA = [("promo_code", "SPRING"), ("discount", "20"), ("theme", "green")]

COMPOSER = "form[data-composer]"

# What one test leaves for the next (they run in file order).
journey: dict[str, str] = {}


# --- helpers -----------------------------------------------------------------


def wrapper_of(element: WebElement) -> WebElement:
    """The field's wrapper, the element that carries data-layouts and hidden."""
    return element.find_element(By.XPATH, "./ancestor::div[contains(concat(' ', @class, ' '), ' field ')][1]")


def button(driver: WebDriver, text: str, scope: WebElement | None = None) -> WebElement:
    root = scope or driver
    matches = [b for b in root.find_elements(By.TAG_NAME, "button") if b.text.strip() == text]
    assert matches, f"no button {text!r}"
    return matches[-1]


def still_same_page(old_page: WebElement) -> bool:
    """True while no navigation has happened (the script did the work)."""
    try:
        old_page.tag_name
        return True
    except Exception:
        return False


def row_names(driver: WebDriver, list_path: str, field: str) -> list[str]:
    rows = driver.find_elements(By.CSS_SELECTOR, f'[data-rows="{list_path}"] > [data-row]')
    return [r.find_element(By.CSS_SELECTOR, f'[name$=".{field}"]').get_attribute("name") for r in rows]


def swatch_of(driver: WebDriver, name: str) -> WebElement:
    return wrapper_of(by_name(driver, name)).find_element(By.CSS_SELECTOR, "svg.swatch rect")


def announced(driver: WebDriver, text: str) -> None:
    wait(driver).until(
        lambda d: d.execute_script(
            "const s = document.querySelector('[data-composer] [role=status]');"
            "return s ? s.textContent : ''"
        ) == text,
        message=f"expected the live region to say {text!r}",
    )


def focused(driver: WebDriver) -> WebElement:
    return driver.switch_to.active_element


def section(driver: WebDriver, title: str) -> WebElement:
    for panel in driver.find_elements(By.CSS_SELECTOR, "main section.panel"):
        headings = panel.find_elements(By.TAG_NAME, "h2")
        if headings and headings[0].text.strip() == title:
            return panel
    raise AssertionError(f"no section {title!r}")


def details(panel: WebElement) -> list[tuple[str, str]]:
    terms = panel.find_elements(By.CSS_SELECTOR, "dl.details > dt")
    values = panel.find_elements(By.CSS_SELECTOR, "dl.details > dd")
    return [(t.text.strip(), v.text.strip()) for t, v in zip(terms, values)]


@pytest.fixture(scope="module", autouse=True)
def separate_cookies(driver):
    """Both test servers live on 127.0.0.1, where cookies ignore the port: start and end clean."""
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    yield
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})


# --- the journey ---------------------------------------------------------------

def test_the_composer_offers_six_layouts_and_shows_only_their_fields(driver, seeded_herald, screenshot):
    # Given the admin the CLI created signs in
    driver.get(seeded_herald.url("/login"))
    type_into(driver, "email", seeded_herald.admin_email)
    type_into(driver, "password", seeded_herald.admin_password)
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, 'form[action="/login"] button[type="submit"]'))
    wait(driver).until(lambda d: current_path(d) == "/campaigns", message="expected /campaigns after login")

    # When they open a new campaign
    driver.get(seeded_herald.url("/campaigns/new"))
    visible(driver, COMPOSER)

    # Then the six layouts are offered, card first and chosen
    radios = driver.find_elements(By.CSS_SELECTOR, 'input[name="message.layout"]')
    assert [r.get_attribute("value") for r in radios] == LAYOUTS
    assert radios[0].is_selected()
    # And the no-script "Show this layout's fields" button is hidden by the script
    assert not driver.find_element(By.CSS_SELECTOR, "[data-no-js-only]").is_displayed()
    screenshot("composer-new.png")

    # When they choose "Image only"
    page = driver.find_element(By.TAG_NAME, "html")
    click(driver, driver.find_element(By.CSS_SELECTOR, 'input[name="message.layout"][value="image_only"]'))

    # Then, without a round trip, the title field is hidden and the image URL stays
    title = wrapper_of(by_name(driver, "message.title.text"))
    wait(driver).until(lambda d: not title.is_displayed(), message="the title stayed visible for image_only")
    assert title.get_attribute("hidden") is not None
    assert by_name(driver, "message.imageUrl").is_displayed()
    assert not by_name(driver, "message.secondaryAction.text").is_displayed()
    assert driver.find_element(By.CSS_SELECTOR, 'label[for="field-message-imageUrl"]').text == "Image URL"
    assert still_same_page(page), "choosing a layout reloaded the page"
    screenshot("composer-layout-image-only.png")

    # When they choose "Card" again
    click(driver, driver.find_element(By.CSS_SELECTOR, 'input[name="message.layout"][value="card"]'))

    # Then the card's fields are back, its secondary button included
    wait(driver).until(
        lambda d: by_name(d, "message.secondaryAction.text").is_displayed(),
        message="the secondary button text did not come back for card",
    )
    assert by_name(driver, "message.title.text").is_displayed()
    assert driver.find_element(By.CSS_SELECTOR, 'label[for="field-message-imageUrl"]').text == "Portrait image URL"
    # (fields every layout uses, such as the campaign name and data rows, were never hidden)
    assert by_name(driver, "name").is_displayed()
    assert by_name(driver, "data.0.key").is_displayed()
    assert still_same_page(page)


def test_composing_and_publishing_a_card(driver, seeded_herald, screenshot):
    # Given the new-campaign composer with the card layout
    assert current_path(driver) == "/campaigns/new"
    page = driver.find_element(By.TAG_NAME, "html")

    # When they fill in the card
    type_into(driver, "name", TITLE)
    type_into(driver, "message.title.text", TITLE)

    # (typing a color paints its swatch; alpha comes first in #AARRGGBB)
    assert swatch_of(driver, "message.title.color").get_attribute("fill") == "none"
    type_into(driver, "message.title.color", "#1A73E8")
    assert swatch_of(driver, "message.title.color").get_attribute("fill") == "#1A73E8"
    assert swatch_of(driver, "message.title.color").get_attribute("fill-opacity") == "1"
    type_into(driver, "message.body.color", "#801A73E8")
    assert swatch_of(driver, "message.body.color").get_attribute("fill") == "#1A73E8"
    assert swatch_of(driver, "message.body.color").get_attribute("fill-opacity") == "0.50"
    type_into(driver, "message.body.color", "#12")
    assert swatch_of(driver, "message.body.color").get_attribute("fill") == "none"
    type_into(driver, "message.body.color", "")

    type_into(driver, "message.body.text", "Everything green is 20% off this week.")
    type_into(driver, "message.imageUrl", "https://example.com/p.png")
    type_into(driver, "message.backgroundColor", "#FFFFFF")
    assert swatch_of(driver, "message.backgroundColor").get_attribute("fill") == "#FFFFFF"
    type_into(driver, "message.primaryAction.text", "Shop now")
    type_into(driver, "message.primaryAction.url", "https://example.com/shop")
    type_into(driver, "message.secondaryAction.text", "Later")
    screenshot("composer-card-message.png")

    # And add two more custom data rows with "Add a pair"
    add_pair = driver.find_element(By.CSS_SELECTOR, '[data-row-add="data"]')
    assert add_pair.text == "Add a pair"
    assert row_names(driver, "data", "key") == ["data.0.key"]
    click(driver, add_pair)
    announced(driver, "Pair 2 added.")
    assert focused(driver) == by_name(driver, "data.1.key"), "the new row's first input should have focus"
    click(driver, add_pair)
    announced(driver, "Pair 3 added.")
    assert row_names(driver, "data", "key") == ["data.0.key", "data.1.key", "data.2.key"]
    assert row_names(driver, "data", "value") == ["data.0.value", "data.1.value", "data.2.value"]
    for index, (key, value) in enumerate(DATA):
        type_into(driver, f"data.{index}.key", key)
        type_into(driver, f"data.{index}.value", value)

    # And a second trigger, "purchase", with a property filter
    type_into(driver, "triggers.0.event", "app_launch")
    click(driver, button(driver, "Add a trigger"))
    announced(driver, "Trigger 2 added.")
    second = driver.find_elements(By.CSS_SELECTOR, '[data-rows="triggers"] > [data-row]')[1]
    assert second.find_element(By.TAG_NAME, "legend").text == "Trigger 2"
    assert focused(driver) == by_name(driver, "triggers.1.event")
    assert by_name(driver, "triggers.1.event").get_attribute("value") == "", "the new trigger is not blank"
    type_into(driver, "triggers.1.event", "purchase")

    click(driver, second.find_element(By.CSS_SELECTOR, '[data-row-add="triggers.1.filters"]'))
    announced(driver, "Property filter 1 added.")
    assert focused(driver) == by_name(driver, "triggers.1.filters.0.property")
    assert not driver.find_elements(By.CSS_SELECTOR, '[name^="triggers.0.filters."]')
    type_into(driver, "triggers.1.filters.0.property", "product_id")
    Select(by_name(driver, "triggers.1.filters.0.op")).select_by_value("eq")
    Select(by_name(driver, "triggers.1.filters.0.type")).select_by_value("string")
    type_into(driver, "triggers.1.filters.0.value", "sku_123")
    # Every label still points at its own input after the rows were added
    for name in ("triggers.1.event", "triggers.1.filters.0.property", "data.2.key"):
        field_id = by_name(driver, name).get_attribute("id")
        assert driver.find_elements(By.CSS_SELECTOR, f'label[for="{field_id}"]'), f"no label for {name}"
    assert still_same_page(page), "a row button submitted the form"
    scroll_to(driver, driver.find_element(By.ID, "section-data"))
    screenshot("composer-card-rows.png")
    scroll_to(driver, second)
    screenshot("composer-card-triggers.png")

    # And a conversion goal: a purchase of at least 10 within two days, its filter added by the script
    goal = section(driver, "Conversion goal")
    assert by_name(driver, "conversion.windowHours").get_attribute("value") == "72", "the window starts at three days"
    type_into(driver, "conversion.event", "purchase")
    click(driver, goal.find_element(By.CSS_SELECTOR, '[data-row-add="conversion.filters"]'))
    announced(driver, "Property filter 1 added.")
    assert focused(driver) == by_name(driver, "conversion.filters.0.property")
    type_into(driver, "conversion.filters.0.property", "value")
    Select(by_name(driver, "conversion.filters.0.op")).select_by_value("gte")
    Select(by_name(driver, "conversion.filters.0.type")).select_by_value("number")
    type_into(driver, "conversion.filters.0.value", "10")
    type_into(driver, "conversion.windowHours", "48")
    assert still_same_page(page), "the goal's row button submitted the form"

    # When they publish
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, f'{COMPOSER} button[name="intent"][value="publish"]'))

    # Then the campaign's page shows it running, with its data in order and both triggers
    wait(driver).until(lambda d: re.fullmatch(r"/campaigns/\d+", current_path(d)), message="expected /campaigns/N")
    journey["campaign"] = current_path(driver)
    assert visible(driver, "h1").text == TITLE
    badge = visible(driver, ".lead .badge")
    assert badge.text == "Running"
    assert "badge-running" in badge.get_attribute("class").split()
    assert details(section(driver, "Custom data")) == DATA
    assert details(section(driver, "Triggers")) == [
        ("When", "app_launch"),
        ("When", "purchase where product_id equals sku_123"),
    ]
    assert details(section(driver, "Conversion goal")) == [
        ("Counts", "purchase where value is at least 10"),
        ("Within", "48 hours of being shown"),
    ]
    message = dict(details(section(driver, "Message")))
    assert message["Title"] == f"{TITLE} (#1A73E8)"
    assert message["Secondary button"] == "“Later” → dismiss"
    screenshot("composer-published.png")


def test_editing_the_card_removes_a_data_pair(driver, seeded_herald, screenshot):
    # Given the published campaign's page
    assert current_path(driver) == journey["campaign"]

    # When they edit it
    submit_page = driver.find_element(By.TAG_NAME, "html")
    click(driver, driver.find_element(By.LINK_TEXT, "Edit"))
    wait(driver).until(replaced(submit_page))
    visible(driver, COMPOSER)
    assert by_name(driver, "message.title.color").get_attribute("value") == "#1A73E8"
    assert swatch_of(driver, "message.title.color").get_attribute("fill") == "#1A73E8"
    page = driver.find_element(By.TAG_NAME, "html")

    # And change the title, and remove the second pair with its Remove button
    type_into(driver, "message.title.text", NEW_TITLE)
    assert by_name(driver, "data.1.key").get_attribute("value") == "discount"
    second_pair = wrapper_of(by_name(driver, "data.1.key")).find_element(By.XPATH, "./ancestor::*[@data-row][1]")
    click(driver, button(driver, "Remove", second_pair))

    # Then the row is gone, the rest renumbered from 0, and focus is on the row above
    announced(driver, "Pair 2 removed.")
    keys = [by_name(driver, n).get_attribute("value") for n in row_names(driver, "data", "key")]
    assert keys == ["promo_code", "theme", ""]  # the blank row for a new pair stays last
    assert row_names(driver, "data", "key") == ["data.0.key", "data.1.key", "data.2.key"]
    assert by_name(driver, "data.1.value").get_attribute("value") == "green"
    assert focused(driver) == by_name(driver, "data.0.key")
    assert still_same_page(page)
    scroll_to(driver, driver.find_element(By.ID, "section-data"))
    screenshot("composer-edit.png")

    # When they save
    save = driver.find_element(By.CSS_SELECTOR, f'{COMPOSER} button[name="intent"][value="draft"]')
    assert save.text == "Save changes"
    submit_with(driver, save)

    # Then the summary shows the new title and the two remaining pairs
    wait(driver).until(lambda d: current_path(d) == journey["campaign"])
    message = dict(details(section(driver, "Message")))
    assert message["Title"] == f"{NEW_TITLE} (#1A73E8)"
    assert details(section(driver, "Custom data")) == [DATA[0], DATA[2]]
    assert visible(driver, ".lead .badge").text == "Running"
    screenshot("composer-edited.png")


def test_history_lists_both_revisions_and_what_changed(driver, seeded_herald, screenshot):
    # Given the edited campaign's page
    assert current_path(driver) == journey["campaign"]

    # When they open its history
    old_page = driver.find_element(By.TAG_NAME, "html")
    click(driver, driver.find_element(By.LINK_TEXT, "History"))
    wait(driver).until(replaced(old_page))
    assert current_path(driver) == journey["campaign"] + "/history"

    # Then two revisions are listed, newest first, each by the admin
    entries = driver.find_elements(By.CSS_SELECTOR, "ol.history > li")
    assert len(entries) == 2
    assert [e.find_element(By.TAG_NAME, "h2").text.split()[:2] for e in entries] == [
        ["Revision", "2"], ["Revision", "1"],
    ]
    for entry in entries:
        assert seeded_herald.admin_email in entry.text
    assert "Created." in entries[1].text

    # And the second revision shows the title's before and after, and the data change, fields named by their labels
    changes = {
        row.find_element(By.CSS_SELECTOR, "td:nth-child(1)").text: (
            row.find_element(By.CSS_SELECTOR, "td:nth-child(2)").text,
            row.find_element(By.CSS_SELECTOR, "td:nth-child(3)").text,
        )
        for row in entries[0].find_elements(By.CSS_SELECTOR, "tbody tr")
    }
    assert changes["Title"] == (TITLE, NEW_TITLE)
    assert changes["Pair 2 — Key"] == ("discount", "theme")
    assert changes["Pair 2 — Value"] == ("20", "green")
    assert changes["Pair 3 — Key"] == ("theme", "—")
    screenshot("composer-history.png")


def test_an_invalid_card_is_not_published_and_keeps_what_was_typed(driver, seeded_herald, screenshot):
    # Given a new campaign
    driver.get(seeded_herald.url("/campaigns/new"))
    visible(driver, COMPOSER)

    # When they publish a card with only a name, a title and the color "red"
    type_into(driver, "name", "Broken card")
    type_into(driver, "message.title.text", "Half done")
    type_into(driver, "message.title.color", "red")
    assert swatch_of(driver, "message.title.color").get_attribute("fill") == "none"
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, f'{COMPOSER} button[name="intent"][value="publish"]'))

    # Then an error summary lists the problems
    summary = visible(driver, ".error-summary")
    assert summary.get_attribute("role") == "alert"
    problems = [li.text for li in summary.find_elements(By.TAG_NAME, "li")]
    assert len(problems) >= 3, problems
    assert any("#1A73E8" in p for p in problems), problems  # the color
    assert any("portrait image" in p for p in problems), problems
    assert any("trigger" in p for p in problems), problems

    # And the title color field shows its own error
    color = by_name(driver, "message.title.color")
    assert color.get_attribute("aria-invalid") == "true"
    error = driver.find_element(By.ID, color.get_attribute("aria-describedby"))
    assert error.is_displayed() and "#1A73E8" in error.text
    assert "field-invalid" in wrapper_of(color).get_attribute("class").split()

    # And what they typed is kept
    assert by_name(driver, "name").get_attribute("value") == "Broken card"
    assert by_name(driver, "message.title.text").get_attribute("value") == "Half done"
    assert color.get_attribute("value") == "red"
    assert driver.find_element(By.CSS_SELECTOR, 'input[name="message.layout"][value="card"]').is_selected()
    screenshot("composer-invalid.png")
    scroll_to(driver, color)
    screenshot("composer-invalid-color.png")

    # And no campaign was created
    driver.get(seeded_herald.url("/campaigns"))
    names = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "table.data tbody td:first-child a")]
    assert names == [TITLE]
    screenshot("composer-campaigns-list.png")


def set_by_script(driver: WebDriver, name: str, value: str) -> None:
    """Fill a field as typing does, for inputs whose widget (datetime-local) Selenium cannot type into portably."""
    field = scroll_to(driver, by_name(driver, name))
    driver.execute_script(
        "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input', {bubbles: true}))", field, value)


def test_typing_a_date_or_days_chooses_its_option_and_another_choice_wins_afterwards(driver, seeded_herald, screenshot):
    # Given a new modal with its name and title
    driver.get(seeded_herald.url("/campaigns/new"))
    visible(driver, COMPOSER)
    click(driver, driver.find_element(By.CSS_SELECTOR, 'input[name="message.layout"][value="modal"]'))
    type_into(driver, "name", "Winter notice")
    type_into(driver, "message.title.text", "Winter hours")
    never = driver.find_element(By.ID, "field-schedule-endMode-never")
    at_end = driver.find_element(By.ID, "field-schedule-endMode-at")
    assert never.is_selected()

    # When they type an end date and a number of days, leaving the radios as they were
    set_by_script(driver, "schedule.end", "2031-01-31T18:00")
    type_into(driver, "frequency.days", "3")

    # Then each value chose its option, and a screen reader heard so
    assert at_end.is_selected() and not never.is_selected()
    assert driver.find_element(By.ID, "field-frequency-type-every-n-days").is_selected()
    announced(driver, "Chose “At most once every N days”.")
    screenshot("composer-typed-values-choose.png")

    # When they save, then the campaign ends then and shows at most every 3 days
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, f'{COMPOSER} button[name="intent"][value="draft"]'))
    schedule = dict(details(section(driver, "Schedule")))
    assert schedule["Ends"].startswith("Jan 31, 2031"), schedule
    assert dict(details(section(driver, "Delivery")))["Frequency"] == "At most once every 3 days"

    # When they edit it and choose "Never" on purpose, with the old date still in its field
    old_page = driver.find_element(By.TAG_NAME, "html")
    click(driver, driver.find_element(By.LINK_TEXT, "Edit"))
    wait(driver).until(replaced(old_page))
    click(driver, driver.find_element(By.ID, "field-schedule-endMode-never"))
    assert by_name(driver, "schedule.end").get_attribute("value") == "2031-01-31T18:00"
    submit_with(driver, driver.find_element(By.CSS_SELECTOR, f'{COMPOSER} button[name="intent"][value="draft"]'))

    # Then the choice wins: the campaign never ends, with no complaint about the date left on screen
    schedule = dict(details(section(driver, "Schedule")))
    assert schedule["Ends"] == "Never", schedule
