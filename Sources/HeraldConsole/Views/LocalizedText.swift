import Foundation
import HeraldDomain
import HeraldStorage
import Synchronization

/// Small pieces of HTML for values inside translated sentences. Every function escapes what it is given;
/// the result is safe to put in a template with `{{{…}}}`.
enum Markup {
    /// `text` with `&`, `<`, `>`, `"` and `'` written as entities. Byte by byte, so a quote followed by a
    /// combining mark is still a quote: read as characters, `"` and U+0301 make one character that is not
    /// `"`, and the quote would close the attribute it was written in.
    static func escape(_ text: String) -> String {
        let bytes = text.utf8
        guard bytes.contains(where: { escapes($0) }) else { return text }
        var result = ""
        result.reserveCapacity(bytes.count + 32)
        var copied = bytes.startIndex
        var index = copied
        while index != bytes.endIndex {
            let byte = bytes[index]
            if escapes(byte) {
                // Each escaped byte is ASCII, so `copied..<index` never splits a character's bytes.
                result += text[copied..<index]
                result += entity(byte)
                copied = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
        result += text[copied...]
        return result
    }

    private static func escapes(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "&") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
    }

    private static func entity(_ byte: UInt8) -> String {
        switch byte {
        case UInt8(ascii: "&"): "&amp;"
        case UInt8(ascii: "<"): "&lt;"
        case UInt8(ascii: ">"): "&gt;"
        case UInt8(ascii: "\""): "&quot;"
        default: "&#39;"
        }
    }

    /// User text (a name, a title, a button's text): isolated, its direction taken from its own letters.
    static func user(_ text: String) -> String {
        "<bdi>" + escape(text) + "</bdi>"
    }

    /// A value that reads left to right in every language (a URL, a color, an event id, a time zone, a path):
    /// isolated and never mirrored.
    static func ltr(_ text: String, code: Bool = true) -> String {
        code ? "<code dir=\"ltr\">" + escape(text) + "</code>" : "<span dir=\"ltr\">" + escape(text) + "</span>"
    }

    /// A time as shown (`text`), with the instant in `datetime` for machines.
    static func time(_ date: Date, _ text: String) -> String {
        "<time datetime=\"" + UTCTime.rfc3339(date) + "\">" + escape(text) + "</time>"
    }

    /// Fills `{name}` in already escaped `html` with the markup in `arguments`, in one pass: markup put in
    /// is never read again, so braces in user text stay text.
    static func fill(_ html: String, _ arguments: [String: String]) -> String {
        Localizer.fill(html, arguments)
    }
}

/// The words the console's pages share (`common.*`, `times.*`) and sentences made as HTML.
extension Localizer {
    /// The sentence `key` as HTML: its words escaped, each `{argument}` replaced by markup made with `Markup`.
    func markup(_ key: String, _ arguments: [String: String]) -> String {
        Markup.fill(Markup.escape(self(key)), arguments)
    }

    /// The plural sentence `key` for `count` as HTML (`{count}` in the language's digits).
    func pluralMarkup(_ key: String, count: Int, _ arguments: [String: String]) -> String {
        Markup.fill(Markup.escape(plural(key, count: count)), arguments)
    }

    /// User text in the language's quotation marks, isolated, for plain-text sentences (flash messages, titles).
    func quoted(_ text: String) -> String {
        self("common.quoted", ["text": Localizer.isolated(text)])
    }

    /// User text in the language's quotation marks, as HTML.
    func quotedMarkup(_ text: String) -> String {
        markup("common.quoted", ["text": Markup.user(text)])
    }

    func title(_ status: CampaignStatus) -> String { self("common.status." + status.rawValue) }
    func title(_ state: CampaignState) -> String { self("common.state." + state.rawValue) }
    func title(_ layout: Message.Layout) -> String { self("common.layout." + layout.rawValue) }
    func title(_ platform: Platform) -> String { self("common.platform." + platform.rawValue) }

    /// A platform as reports name it (`ios`), translated when known, else as sent.
    func platformTitle(_ name: String) -> String {
        Platform(rawValue: name).map(title) ?? name
    }

    /// Who made a change, from its stored label: a person's email as it is, an API key or the command line
    /// in the reader's words. As HTML, the name isolated.
    func actorMarkup(_ label: String) -> String {
        switch AuditActor.kind(ofLabel: label) {
        case .person(let email): Markup.user(email)
        case .key(let name): markup("common.actor.api_key", ["name": Markup.user(name)])
        case .commandLine: Markup.escape(self("common.actor.command_line"))
        case .visitor: Markup.escape(self("common.actor.visitor"))
        }
    }

    /// The same as plain text (for attributes and sentences that are not HTML).
    func actor(_ label: String) -> String {
        switch AuditActor.kind(ofLabel: label) {
        case .person(let email): email
        case .key(let name): self("common.actor.api_key", ["name": Localizer.isolated(name)])
        case .commandLine: self("common.actor.command_line")
        case .visitor: self("common.actor.visitor")
        }
    }

    /// A time in the user's zone, as `<time>`.
    func timeMarkup(_ date: Date) -> String {
        Markup.time(date, dateTime(date))
    }

    /// The clock time alone ("09:00") in the user's zone (or `zone`).
    func clockTime(_ date: Date, in zone: TimeZone? = nil) -> String {
        formatted(date, Date.FormatStyle(date: .omitted, time: .shortened), in: zone)
    }

    /// A scheduled time: in the campaign's own zone with its name, and in the user's zone when that is
    /// another one, e.g. "21 Sept 2026, 09:00 (Asia/Tehran) · 10:30 your time". A zone that is not
    /// known (a stored campaign from an older Herald) leaves the user's time alone.
    func scheduleMarkup(_ date: Date, zone identifier: String) -> String {
        guard let zone = TimeZoneName.zone(identifier) else { return timeMarkup(date) }
        let there = markup("times.in_zone", [
            "time": Markup.time(date, dateTime(date, in: zone)), "zone": Markup.ltr(identifier, code: false),
        ])
        guard zone.secondsFromGMT(for: date) != timeZone.secondsFromGMT(for: date) || zone.identifier != timeZone.identifier else {
            return there
        }
        // The user's clock time alone reads best; the whole date when the day differs there.
        let sameDay = self.date(date, in: zone) == self.date(date)
        let here = Markup.time(date, sameDay ? clockTime(date) : dateTime(date))
        return there + " · " + markup("times.your_time", ["time": here])
    }

    /// A UTC day (`2026-11-21`, as reports count days) written in the language, or as given when unreadable.
    func day(_ day: String) -> String {
        let key = DayTexts.Key(language: language, day: day)
        if let known = DayTexts.written.withLock({ $0[key] }) { return known }
        // Only days that read are kept (ten characters each); anything else is shown as typed.
        guard let date = UTCTime.date(day: day) else { return day }
        let text = self.date(date, in: .gmt)
        DayTexts.written.withLock { texts in
            if texts.count >= DayTexts.most { texts.removeAll(keepingCapacity: true) }
            texts[key] = text
        }
        return text
    }
}

/// Days as each language writes them, kept once written: a 90-day report writes each day twice, and
/// Foundation's date formatting is most of that. A day's text never changes; at most `most` are kept.
private enum DayTexts {
    struct Key: Hashable {
        let language: ConsoleLanguage
        let day: String
    }

    static let most = 20_000
    static let written = Mutex<[Key: String]>([:])
}
