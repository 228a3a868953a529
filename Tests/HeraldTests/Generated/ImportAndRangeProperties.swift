import Foundation
import HeraldDomain
import HeraldHTTP
import PropertyBased
import TestSupport
import Testing

/// A file for the console's import: campaigns in one of the accepted shapes, each a generated case.
struct ImportCase: Sendable, CustomStringConvertible {
    let file: [UInt8]
    let campaigns: [CampaignCase]
    let dryRun: Bool
    /// Why the whole file must be refused, if it must.
    let refusal: String?

    var description: String {
        "dry run: \(dryRun), refusal: \(refusal ?? "none"), campaigns: \(campaigns.map { "\($0.expected)" })\n\(String(decoding: file.prefix(4000), as: UTF8.self))"
    }

    /// Whether import creates every campaign of the file (true), none (false), or either (nil: a case the format leaves open).
    var importsAll: Bool? {
        if refusal != nil { return false }
        var open = false
        for campaign in campaigns {
            switch campaign.expected {
            case .stored: continue
            // The media type belongs to the API request, not to the file.
            case .refused(let statuses, _) where statuses == [415]: continue
            case .refused: return false
            case .either: open = true
            }
        }
        return open ? nil : true
    }

    static func generator(app: Int64) -> Generator<ImportCase, Shrink.None<ImportCase>> {
        Generated.cases { draw in
            let campaigns = draw.list(0...4) { draw in
                // Mostly importable campaigns, so that most files are imported whole.
                var campaign = CampaignCases.make(&draw, app: app)
                while draw.chance(0.7), case .refused = campaign.expected { campaign = CampaignCases.make(&draw, app: app) }
                return campaign
            }
            // Bytes, not text: a document with a byte that is not UTF-8 must reach the import as it is.
            let list = Array("[".utf8) + Array(campaigns.map(\.body).joined(separator: Array(",\n".utf8))) + Array("]".utf8)
            var refusal: String? = campaigns.isEmpty ? "no campaigns" : nil
            var file: [UInt8]
            switch draw.int(0...9) {
            case 0...4:
                let version = draw.chance(0.9) ? 1 : draw.pick([2, 0, -1])
                if version > 1 { refusal = "a newer version" }
                let exported = draw.chance(0.7) ? #""exportedAt": "\#(GeneratedTime.written(GeneratedTime.instant(&draw)))", "# : ""
                file = Array(#"{"schemaVersion": \#(version), \#(exported)"campaigns": "#.utf8) + list + Array("}".utf8)
                if draw.chance(0.1) {
                    file = Array(#"{"schemaVersion": 1, "exportedBy": "me", "campaigns": "#.utf8) + list + Array("}".utf8)
                    refusal = "an unknown key"
                }
            case 5, 6:
                file = list
            case 7 where campaigns.count == 1:
                file = campaigns[0].body
            default:
                file = Array(draw.pick(["", "{", "null", "42", #"{"schemaVersion": "1", "campaigns": []}"#, "\u{FEFF}[]"]).utf8)
                refusal = "not a file of campaigns"
            }
            return ImportCase(file: file, campaigns: campaigns, dryRun: draw.chance(0.15), refusal: refusal)
        }
    }
}

/// A report or stats range as typed in a query.
struct RangeCase: Sendable, CustomStringConvertible {
    let from: String?
    let to: String?

    var description: String { "from=\(from.map { JSONValue.quoted($0) } ?? "absent") to=\(to.map { JSONValue.quoted($0) } ?? "absent")" }

    var query: String {
        [("from", from), ("to", to)].compactMap { name, value in value.map { "\(name)=\(PercentEncoding.encode($0))" } }.joined(separator: "&")
    }

    /// What the report pages read: a date field left blank is absent, and spaces around a date do not count.
    var asTypedInAPage: RangeCase {
        func field(_ value: String?) -> String? { value.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 } }
        return RangeCase(from: field(from), to: field(to))
    }

    /// The inclusive days the range covers, or nil when it is not one (`docs`: days from 2000-01-01 to
    /// 9999-12-31, `from` on or before `to`, at most 366 days; `to` defaults to today and `from` to 29
    /// days before `to`, never before the first day).
    func days(today: Date) -> (from: String, to: String, count: Int)? {
        let calendar = GeneratedTime.calendar
        guard let end = to.map(Self.date) ?? calendar.startOfDay(for: today) else { return nil }
        let first = Date(timeIntervalSince1970: Double(GeneratedTime.first / 1000))
        guard let start = from.map(Self.date) ?? max(end.addingTimeInterval(-29 * 86_400), first) else { return nil }
        let count = Int((end.timeIntervalSince(start) / 86_400).rounded()) + 1
        return count >= 1 && count <= 366 ? (Self.text(start), Self.text(end), count) : nil
    }

    /// Midnight UTC of a `YYYY-MM-DD` day from 2000-01-01 to 9999-12-31, read with Foundation's calendar.
    static func date(_ text: String) -> Date? {
        guard text.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}/) != nil, text.allSatisfy(\.isASCII), text >= "2000-01-01",
              let date = GeneratedTime.calendar.date(from: DateComponents(
                year: Int(text.prefix(4)), month: Int(text.dropFirst(5).prefix(2)), day: Int(text.suffix(2)))),
              Self.text(date) == text else { return nil }
        return date
    }

    static func text(_ date: Date) -> String { String(GeneratedTime.civil(Int64(date.timeIntervalSince1970)).prefix(10)) }

    static func generator(today: Date) -> Generator<RangeCase, Shrink.None<RangeCase>> {
        let todayStart = GeneratedTime.calendar.startOfDay(for: today)
        let first = Date(timeIntervalSince1970: Double(GeneratedTime.first / 1000))
        let last = GeneratedTime.calendar.startOfDay(for: Date(timeIntervalSince1970: Double(GeneratedTime.last / 1000)))
        @Sendable func day(_ draw: inout Draw, near anchor: String?) -> String {
            guard draw.chance(0.75) else {
                return draw.pick(["2026-02-30", "2026-02-29", "2100-02-29", "0000-01-01", "1999-12-31", "10000-01-01", "2026-1-1", "", " 2026-01-01",
                                  "2026-01-01T00:00:00Z", "２０２６-01-01", "٢٠٢٦-٠١-٠١", "-001-01-01", "2026/01/01", "2026-01-01\u{0}", "9999-12-32",
                                  "2026-00-10", "2026-13-01", "+2026-01-01", "2026-01-01 ", "9999-12-31", "2000-01-01"])
            }
            let base = anchor.flatMap(RangeCase.date) ?? draw.pick([first, last, todayStart, Date(timeIntervalSince1970: Double(draw.int64(GeneratedTime.first / 1000...GeneratedTime.last / 1000)))])
            let offset = draw.pick([0, 1, -1, 29, 30, 364, 365, 366, 367, -365, -366]) + (draw.chance(0.3) ? draw.int(-400...400) : 0)
            return text(base.addingTimeInterval(Double(offset) * 86_400))
        }
        return Generated.cases { draw in
            let to = draw.chance(0.85) ? day(&draw, near: nil) : nil
            return RangeCase(from: draw.chance(0.85) ? day(&draw, near: to) : nil, to: to)
        }
    }
}

@Suite("Generated imports and report ranges against the application", .serialized)
struct GeneratedImportAndRangeProperties {
    @Test("Generated import files are never a 5xx; a file is imported whole as its campaigns read back, or not at all")
    func imports() async throws {
        let fixture = try await GeneratedFixture.make()
        var run = GeneratedRun("imports", cases: 60)
        run.run(ImportCase.generator(app: fixture.shop)) { file, run in
            let before = try fixture.newestCampaign() ?? 0
            let answer = fixture.importFile(file.file, app: fixture.shop, dryRun: file.dryRun)
            run.note("\(answer.status)")
            let created = try Self.campaigns(after: before, fixture)
            let allowed: Set<Int> = switch file.importsAll {
            case true?: file.dryRun ? [200] : [303]
            case false?: [422]
            case nil: file.dryRun ? [200, 422] : [303, 422]
            }
            run.expect(allowed.contains(answer.status), "answered \(answer.status), not \(allowed.sorted()): \(GeneratedCampaignJSONProperty.pageText(answer.text))", input: file)
            guard answer.status == 303 else {
                return run.expect(created.isEmpty, "\(created.count) campaigns were created though the import answered \(answer.status)", input: file)
            }
            run.expect(created.count == file.campaigns.count, "\(created.count) campaigns imported from a file of \(file.campaigns.count)", input: file)
            for (document, sent) in zip(created, file.campaigns) {
                run.expect(document["status"]?.text == "\"draft\"", "an imported campaign is \(document["status"]?.text ?? "without status")", input: file)
                if case .either = sent.expected { continue }
                GeneratedCampaignJSONProperty.expectSame(document, sent.stored, sent, "an imported campaign", &run, input: file)
            }
        }
    }

    /// The campaigns with an id above `id`, oldest first.
    static func campaigns(after id: Int64, _ fixture: GeneratedFixture) throws -> [JSONValue] {
        let page = try JSONValue.parse(fixture.api("GET", "/api/v1/campaigns?pageSize=200").body)
        guard case .array(let all)? = page["campaigns"] else { return [] }
        return all.filter { ($0["id"]?.numberValue ?? 0) > Double(id) }.reversed()
    }

    @Test("Generated report and stats ranges are a 200 covering exactly the days asked for, or a 400; never a 5xx")
    func reportRanges() async throws {
        let fixture = try await GeneratedFixture.make()
        let campaign = try JSONValue.parse(fixture.api("POST", "/api/v1/campaigns", body: Array(CampaignAPITests.cardJSON(app: fixture.shop).utf8)).body)
        let id = Int64(campaign["id"]?.numberValue ?? 0)
        var run = GeneratedRun("report ranges", cases: 150)
        run.run(RangeCase.generator(today: fixture.app.clock.now)) { range, run in
            let days = range.days(today: fixture.app.clock.now)
            let stats = fixture.api("GET", "/api/v1/campaigns/\(id)/stats?\(range.query)")
            run.note("\(stats.status)")
            run.expect(stats.status == (days == nil ? 400 : 200), "stats answered \(stats.status): \(stats.text.prefix(300))", input: range)
            if stats.status == 200, let days, let body = try? JSONValue.parse(stats.body) {
                run.expect(body["from"]?.text == "\"\(days.from)\"" && body["to"]?.text == "\"\(days.to)\"",
                           "the range read is \(body["from"]?.text ?? "?")…\(body["to"]?.text ?? "?"), not \(days.from)…\(days.to)", input: range)
                if case .array(let daily)? = body["daily"] {
                    run.expect(daily.count == days.count, "\(daily.count) days in the daily series, not \(days.count)", input: range)
                }
            }
            let typed = range.asTypedInAPage
            let expected = typed.days(today: fixture.app.clock.now) == nil ? 400 : 200
            for page in ["/reports", "/campaigns/\(id)/report", "/campaigns/\(id)/report.csv"] {
                let answer = fixture.browser.get("\(page)?\(range.query)")
                run.expect(answer.status == expected, "\(page) answered \(answer.status), not \(expected)", input: range)
            }
        }
    }
}
