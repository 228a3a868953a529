/// What is wrong, in words two audiences read: a stable key with its arguments, which the console renders
/// from `validation.<key>` in the reader's language, and the English sentence the API, the command line
/// and logs show (`message`), made from `english` so it reads exactly as it always has.
public struct ProblemText: Sendable, Equatable {
    /// A value a sentence names: a number (written in the reader's digits) or text (isolated in the
    /// sentence, as it may be user text in another script).
    public enum Argument: Sendable, Equatable {
        case number(Int)
        case text(String)

        var english: String {
            switch self {
            case .number(let value): String(value)
            case .text(let text): text
            }
        }
    }

    public let key: String
    public let arguments: [String: Argument]

    public init(_ key: String, _ arguments: [String: Argument] = [:]) {
        self.key = key
        self.arguments = arguments
    }

    /// The English sentence.
    public var message: String {
        Self.fill(Self.english[key] ?? key, arguments.mapValues(\.english))
    }

    /// Fills `{name}` with `arguments[name]`; a name without a value stays as written.
    public static func fill(_ template: String, _ arguments: [String: String]) -> String {
        arguments.isEmpty ? template : fill(template) { arguments[$0] }
    }

    /// Fills `{name}` with `value(name)`; a name it answers nil for stays as written. For one text filled
    /// many times on a page (a chart's day titles), where a dictionary of arguments for each costs more
    /// than the filling.
    public static func fill(_ template: String, _ value: (String) -> String?) -> String {
        // Over the UTF-8 bytes, copying the text between names whole: braces are ASCII, so every index
        // found is a character boundary, and a page fills hundreds of strings.
        let bytes = template.utf8
        let (openBrace, closeBrace) = (UInt8(ascii: "{"), UInt8(ascii: "}"))
        guard var open = bytes.firstIndex(of: openBrace) else { return template }
        var result = ""
        result.reserveCapacity(bytes.count + 32)
        var copied = bytes.startIndex
        while true {
            let nameStart = bytes.index(after: open)
            guard let end = bytes[nameStart...].firstIndex(where: { $0 == openBrace || $0 == closeBrace }) else { break }
            // "{a{b}": the first brace opens nothing and stays as it is.
            if bytes[end] == openBrace {
                open = end
                continue
            }
            let afterEnd = bytes.index(after: end)
            // A name with no argument stays as written.
            if let value = value(String(template[nameStart..<end])) {
                result += template[copied..<open]
                result += value
                copied = afterEnd
            }
            guard let next = bytes[afterEnd...].firstIndex(of: openBrace) else { break }
            open = next
        }
        result += template[copied...]
        return result
    }

    /// Every key's English sentence. The console's `Locales/en.json` holds the same sentences under
    /// `validation` (a test keeps the two equal), and the other catalogs their translations.
    public static let english: [String: String] = [
        // The campaign
        "name_required": "Give the campaign a name, so your team can find it.",
        "name_too_long": "Use at most {limit} characters for the name.",
        "description_too_long": "Use at most {limit} characters for the description.",
        "priority_range": "Choose a priority from 1 (highest) to 10 (lowest).",
        "control_character": "Remove the control character {character}.",
        "control_character_one_line": "Remove the control character {character} (this field is one line).",
        // Custom data
        "too_many_data_pairs": "Use at most {limit} custom data pairs; this campaign has {count}.",
        "data_key_required": "Give this value a key, or remove the row.",
        "data_key_duplicate": "The key “{key}” is used twice; keys must be unique.",
        "data_key_too_long": "Use at most {limit} characters for a key.",
        "data_value_too_long": "Use at most {limit} characters for a value.",
        // Triggers and their filters
        "trigger_required": "Add at least one trigger: the event that shows the message.",
        "too_many_triggers": "Use at most {limit} triggers.",
        "event_required": "Choose a built-in event or type a custom event ID.",
        "event_too_long": "Use at most {limit} characters for an event ID.",
        "event_format": "Event IDs start with a letter and use only letters, digits and underscores.",
        "event_reserved": "Event IDs starting with “{prefix}” are reserved; choose another name.",
        "too_many_filters": "Use at most {limit} filters per trigger.",
        "built_in_event_filters": "The events app_launch, app_foreground and session_start carry no properties; remove the filters or use a purchase or custom event.",
        "push_click_filter_property": "A push_click trigger can filter only on campaign_id, the id of the push campaign that was opened.",
        "push_click_filter_contains": "The campaign_id of a push_click is a number: compare it with equals, does not equal, greater or less than, or exists.",
        "push_click_filter_number": "The campaign_id of a push_click is a number: set the value's type to number and enter the push campaign's id.",
        "filter_value_too_long": "Use at most {limit} characters for a value.",
        "filter_property_required": "Name the property to compare, or remove the filter.",
        "filter_property_too_long": "Use at most {limit} characters for a property.",
        "filter_value_required": "Enter the value to compare with.",
        "filter_needs_number_gt": "“is greater than” compares numbers: set the value's type to number.",
        "filter_needs_number_gte": "“is at least” compares numbers: set the value's type to number.",
        "filter_needs_number_lt": "“is less than” compares numbers: set the value's type to number.",
        "filter_needs_number_lte": "“is at most” compares numbers: set the value's type to number.",
        "filter_needs_text": "“contains” compares text: set the value's type to string.",
        // Schedule and frequency
        "time_zone_unknown": "“{zone}” is not a time zone; choose one such as Europe/Paris or UTC.",
        "date_unsupported": "Choose a date from 2000-01-01 to 9999-12-31 (UTC).",
        "end_before_start": "The end must be after the start.",
        "frequency_days": "Enter how many days apart, from 1 to 365.",
        // The message and its language versions
        "too_many_language_versions": "Use at most {limit} language versions besides the default.",
        "language_tag_invalid": "“{tag}” is not a language tag such as fa, de or pt-BR.",
        "language_version_duplicate": "There is already a version for {tag}; keep one.",
        "text_too_long": "Use at most {limit} characters.",
        "color_invalid": "Use a color like #1A73E8 (or #CC1A73E8 with transparency).",
        "image_url_invalid": "Use an https:// image URL; devices drop images from other addresses.",
        "url_too_long": "Use at most {limit} characters for a link.",
        "button_text_too_long": "Use at most {limit} characters for a button.",
        "action_http": "Use https:// rather than http://.",
        "action_scheme_refused": "“{scheme}:” links are not allowed; use an https:// or app link.",
        "action_url_invalid": "Use an https:// link or an app link such as myapp://offers.",
        "action_no_host": "This https link has no host.",
        "dismiss_range": "Choose from {min} to {max} seconds.",
        "title_required_card": "A card message needs a title.",
        "title_required_modal": "A modal message needs a title.",
        "title_required_banner": "A banner message needs a title.",
        "title_required_fullscreen": "A full screen message needs a title.",
        "slideup_text_required": "A slide-up needs its text.",
        "card_image_required": "A card needs a portrait image (an https URL); devices drop a card without one.",
        "image_required_image_only": "A image only message needs an image (an https URL); devices drop it without one.",
        "image_required_fullscreen": "A full screen message needs an image (an https URL); devices drop it without one.",
        "card_background_required": "A card needs a background color.",
        "card_button_text_required": "A card needs the text of its primary button.",
        "card_button_action_required": "A card's primary button needs an action (an https URL or app link).",
        "button_text_missing": "Give the button a text, or remove its action.",
        "button_action_missing": "Give the button an action, or remove its text.",
        "second_button_text_missing": "Give the second button a text, or remove its action.",
        // Push notifications
        "push_on_in_app": "An in-app campaign has no push notification: remove push, or set channel to push.",
        "message_on_push": "A push campaign has no in-app message: remove message, or set channel to in_app.",
        "push_required": "A push campaign needs its notification.",
        "push_triggers": "A push campaign is sent, not triggered: remove its triggers.",
        "push_text_required": "A notification needs a title or a body (or choose silent).",
        "push_silent_shows_nothing": "A silent notification shows nothing: clear its title, subtitle, body, image, sound and badge, or turn silent off.",
        "push_badge_range": "Choose a badge from 0 to {limit}.",
        "push_name_too_long": "Use at most {limit} characters.",
        "push_device_time_needs_start": "Sending at each device's own time needs a start time.",
        "push_data_key_reserved": "The key “{key}” is kept by Herald or the push services (aps, herald_…, google., gcm., from, notification, message_type, collapse_key); choose another.",
        "push_targeting_device_only": "A push campaign's audience is chosen on the server from registered devices, which do not report this; use platforms, versions, languages, countries or a percentage.",
        "push_payload_too_large": "This notification takes {bytes} bytes for {provider}, over its limit of {limit}; shorten the text or the custom data.",
        // Targeting
        "percentage_range": "Choose a percentage from 1 to 100.",
        "app_version_required": "Enter the app version to compare with, or clear the rule.",
        "app_version_too_long": "Use at most {limit} characters for an app version rule.",
        "app_version_regex_invalid": "This is not a valid regular expression.",
        "language_code_invalid": "“{code}” is not a language code such as en, fa or pt-BR.",
        "country_code_invalid": "“{code}” is not a two-letter country code such as US or IR.",
        "too_many_languages": "Use at most {limit} languages.",
        "too_many_countries": "Use at most {limit} countries.",
        "too_many_user_properties": "Use at most {limit} user property conditions.",
        "days_negative": "Days since first open cannot be negative.",
        "days_too_many": "Use at most {limit} days.",
        "days_max_below_min": "The maximum must be at least the minimum.",
        // Campaign JSON as sent (the API, imports)
        "unknown_field": "Campaign JSON has no such field. Remove it or fix its spelling.",
        "unknown_field_suggestion": "Campaign JSON has no such field; did you mean `{suggestion}`? Remove it or fix its spelling.",
        "time_invalid": "“{text}” is not an RFC 3339 time such as 2026-12-01T09:00:00+01:00.",
        "field_required": "this field is required",
        "expected_string": "expected a string",
        "expected_integer": "expected an integer",
        "expected_number": "expected a number",
        "expected_bool": "expected true or false",
        "expected_array": "expected an array",
        "expected_object": "expected an object",
        "value_invalid": "this does not match Campaign JSON",
        // The composer's form, before validation
        "seconds_whole": "Enter the seconds as a whole number.",
        "days_whole": "Enter the days as a whole number.",
        "badge_whole": "Enter the badge as a whole number.",
        "percentage_whole": "Enter a whole percentage from 1 to 100.",
        "date_time_invalid": "Enter a date and a time, such as 2026-12-01 09:00.",
        "time_skipped": "This time does not exist in {zone}: the clocks skip it. Choose a time outside the change.",
        "start_unused": "You entered a start, but “When published” is chosen above. Choose “At a date and time” to use it, or clear this field.",
        "end_unused": "You entered an end, but “Never” is chosen above. Choose “At a date and time” to use it, or clear this field.",
        "days_unused_once": "You entered days between showings, but “Once per device” is chosen above. Choose “At most once every N days” to use it, or clear this field.",
        "days_unused_always": "You entered days between showings, but “Every time it triggers” is chosen above. Choose “At most once every N days” to use it, or clear this field.",
        "field_unused": "This field counts only with another option chosen above. Choose that option to use it, or clear this field.",
        "filter_not_number": "Enter a number, such as 9.99, or change the type to string.",
        "filter_not_bool": "Enter true or false, or change the type.",
        "app_required": "Choose the app this campaign belongs to.",
        "end_passed": "This end has already passed; choose a later end or none.",
    ]
}
