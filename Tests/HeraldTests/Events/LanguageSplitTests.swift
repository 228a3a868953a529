import Foundation
import GRDB
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
@testable import HeraldSQLite
import HeraldStorage
import TestSupport
import Testing

/// Events say which language version a display showed; ingestion checks and stores it, rollups keep
/// counts per language, and the stats split by it, bounded.
@Suite("Events and stats by language shown")
struct LanguageSplitTests {
    static func impression(_ fixture: EventTests.Fixture, language: Any?, installation: String = "iid-1", type: String = "impression",
                           extra: [String: Any] = [:]) -> [String: Any] {
        var event = EventTests.event(type, campaign: fixture.campaign, at: fixture.app.clock.now, installation: installation, extra: extra)
        if let language { event["language"] = language }
        return event
    }

    @Test("`language` is stored in canonical case; absent or null is the default version; a bad tag rejects only its event, naming the field")
    func ingestion() async throws {
        // Given a batch with well-formed tags in any case, no tag, a null, and malformed ones
        let fixture = try await EventTests.fixture()
        let sent: [(Any?, String?)] = [
            ("fa", "fa"), ("pt-br", "pt-BR"), ("ZH-hant-tw", "zh-Hant-TW"), ("es-419", "es-419"), (nil, nil), (NSNull(), nil),
        ]
        let malformed: [Any] = ["", "english", "fa_IR", "fa-", "pt-BR-x", "e\u{301}n", "fa ", String(repeating: "a", count: 100_000), 7, ["fa"]]
        var batch = sent.map { Self.impression(fixture, language: $0.0) }
        batch += malformed.map { Self.impression(fixture, language: $0) }
        let answer = try fixture.answer(fixture.post(batch))

        // Then the good ones are kept, each bad one rejected by index with a reason that names `language`
        #expect(answer["accepted"] as? Int == sent.count)
        let rejected = try #require(answer["rejected"] as? [[String: Any]])
        #expect(rejected.compactMap { $0["index"] as? Int } == Array(sent.count..<batch.count))
        #expect(rejected.allSatisfy { ($0["error"] as? String)?.contains("`language`") == true }, "\(rejected)")
        #expect((rejected.first?["error"] as? String)?.contains("absent for the default version") == true)

        // And the stored events carry the canonical tag, or NULL for the default version
        let stored = try await fixture.app.database.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, language FROM events").map { ($0["id"] as String, $0["language"] as String?) }
        }
        let byID = Dictionary(uniqueKeysWithValues: stored)
        for (event, (_, expected)) in zip(batch, sent) {
            #expect(byID[(event["id"] as? String ?? "").lowercased()] == .some(expected))
        }
    }

    @Test("Stats split real traffic by language shown, most impressions first, the default version without a tag, test devices apart")
    func stats() async throws {
        // Given events in Persian, German and the default version, and a test device's Persian ones
        let fixture = try await EventTests.fixture()
        _ = try fixture.app.database.apps.addTestDevice(appID: fixture.shop, installationID: "iid-qa", name: "QA", actor: .commandLine, now: fixture.app.clock.now)
        var batch = (0..<3).map { _ in Self.impression(fixture, language: "fa") }
        batch += [Self.impression(fixture, language: "FA", type: "click", extra: ["action": "primary"]),
                  Self.impression(fixture, language: nil), Self.impression(fixture, language: nil),
                  Self.impression(fixture, language: nil, type: "dismiss", extra: ["dismissType": "swipe"]),
                  Self.impression(fixture, language: "de"), Self.impression(fixture, language: "de", type: "conversion", extra: ["event": "purchase"]),
                  Self.impression(fixture, language: "de", type: "error", extra: ["errorCode": "image_fetch"]),
                  Self.impression(fixture, language: "fa", installation: "iid-qa"), Self.impression(fixture, language: "ja", installation: "iid-qa")]
        #expect(try fixture.answer(fixture.post(batch))["accepted"] as? Int == batch.count)

        // When the stats are read
        let stats = try fixture.stats("")

        // Then each language has its own figures, the default version's row has no `language`, and the test device counts nowhere
        let rows = try #require(stats["byLanguage"] as? [[String: Any]])
        #expect(rows.map { $0["language"] as? String } == ["fa", nil, "de"])
        #expect(rows.map { $0["impressions"] as? Int } == [3, 2, 1])
        #expect(rows.map { $0["clicks"] as? Int } == [1, 0, 0])
        #expect(rows.map { $0["ctr"] as? Double } == [0.3333, 0, 0])
        #expect(rows.map { $0["dismissals"] as? Int } == [0, 1, 0])
        #expect(rows.map { $0["errors"] as? Int } == [0, 0, 1])
        #expect(rows.map { $0["conversions"] as? Int } == [0, 0, 1])
        #expect(rows[1].keys.contains("language") == false)
        #expect((stats["otherLanguages"] as? [String: Any])?["impressions"] as? Int == 0)
        #expect((stats["test"] as? [String: Any])?["impressions"] as? Int == 2)
    }

    @Test("Five thousand languages make a bounded answer: the top 20 and the rest summed, in the stats, the report and the CSV")
    func bounded() async throws {
        // Given a campaign shown in 5,000 distinct (well-formed) languages on one day, most often in Persian
        let fixture = try await EventTests.fixture()
        let now = fixture.app.clock.now
        let letters: [Character] = Array("abcdefghijklmnopqrstuvwxyz")
        let tags: [String] = (0..<5_000).map { (index: Int) -> String in
            String([letters[index / 676 % 26], letters[index / 26 % 26], letters[index % 26]])
        }
        var events = tags.map { tag in
            Event(id: UUID().uuidString, appID: fixture.shop, campaignID: fixture.campaign, type: .impression, occurredAt: now, platform: "ios",
                  installationID: nil, detail: "", url: nil, test: false, language: tag)
        }
        events += (0..<5).map { _ in
            Event(id: UUID().uuidString, appID: fixture.shop, campaignID: fixture.campaign, type: .impression, occurredAt: now, platform: "ios",
                  installationID: nil, detail: "", url: nil, test: false, language: "fa")
        }
        for batch in stride(from: 0, to: events.count, by: 1000) {
            _ = try fixture.app.database.events.ingest(Array(events[batch..<min(batch + 1000, events.count)]), now: now)
        }

        // When the stats, the report and its CSV are read
        let stats = try fixture.stats("")
        let rows = try #require(stats["byLanguage"] as? [[String: Any]])

        // Then 20 languages are listed, the most shown first, and the others are summed, not listed
        #expect(rows.count == EventCounts.topLanguages)
        #expect(rows.first?["language"] as? String == "fa" && rows.first?["impressions"] as? Int == 5)
        #expect(rows.dropFirst().map { $0["language"] as? String } == Array(tags.filter { $0 != "fa" }.prefix(19)), "ties by tag")
        let listed = rows.compactMap { $0["impressions"] as? Int }.reduce(0, +)
        #expect((stats["otherLanguages"] as? [String: Any])?["impressions"] as? Int == 5_005 - listed)
        #expect((stats["totals"] as? [String: Any])?["impressions"] as? Int == 5_005)
        let browser = try await TestApp.signedIn(fixture.app)
        let page = browser.get("/campaigns/\(fixture.campaign)/report")
        #expect(page.status == 200)
        #expect(page.body.count < 200_000, "the page is \(page.body.count) bytes")
        let languages = ReportTests.section(page.text, #"class="panel report-languages""#)
        #expect(languages.matches(of: /<tr><th scope="row">/).count == EventCounts.topLanguages + 1)
        #expect(ReportTests.cells(languages, row: "Other languages").dropFirst().first == (5_005 - listed).formatted(.number.locale(Locale(identifier: "en"))))
        let csv = browser.get("/campaigns/\(fixture.campaign)/report.csv").text
        let section = csv.components(separatedBy: "\r\n\r\n").first { $0.hasPrefix("language,") } ?? ""
        #expect(section.split(separator: "\r\n").count == 1 + EventCounts.topLanguages + 1)
        #expect(section.split(separator: "\r\n").last == "Other languages,\(5_005 - listed),0,0.0000,0,0,0")
    }

    @Test("Language rollups always equal counts over raw events, after random batches with duplicates")
    func rollupsMatchRawEvents() async throws {
        let fixture = try await EventTests.fixture()
        var generator = SystemRandomNumberGenerator()
        var sent: [[String: Any]] = []
        for _ in 0..<6 {
            var batch: [[String: Any]] = (0..<Int.random(in: 20...120, using: &generator)).map { _ in
                var event = EventTests.event(
                    "impression", campaign: fixture.campaign, at: fixture.app.clock.now.addingTimeInterval(-Double.random(in: 0...(5 * 86_400), using: &generator)),
                    installation: "iid-\(Int.random(in: 0..<15, using: &generator))")
                if let language = ["fa", "pt-BR", "pt-br", "de", nil].randomElement(using: &generator)! { event["language"] = language }
                return event
            }
            batch += sent.shuffled(using: &generator).prefix(10)  // resends
            sent += batch
            _ = fixture.post(batch)
        }
        let (raw, rolled) = try fixture.app.database.pool.read { db in
            (try Row.fetchAll(db, sql: """
                SELECT campaign_id, day, test, COALESCE(language, '') AS language, type, COUNT(*) AS count FROM events
                GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
                """),
             try Row.fetchAll(db, sql: "SELECT campaign_id, day, test, language, type, count FROM event_language_rollups ORDER BY 1, 2, 3, 4, 5"))
        }
        #expect(!raw.isEmpty)
        #expect(raw == rolled)
        #expect(Set(rolled.map { $0["language"] as String }) == ["fa", "pt-BR", "de", ""])
    }

    @Test("Migrating counts every event stored before as the default version's")
    func migrationBackfill() async throws {
        // Given a database at migration 0006 with rollups of real and test traffic
        let folder = try TemporaryFolder()
        let (before, path) = try TestApp.database(migratedBefore: "0007", in: folder)
        try await before.pool.write { db in
            for (day, platform, test, type, detail, count) in [
                ("2026-09-20", "ios", 0, "impression", "", 5), ("2026-09-20", "android", 0, "impression", "", 2),
                ("2026-09-20", "ios", 0, "click", "primary", 2), ("2026-09-20", "ios", 0, "click", "body", 1), ("2026-09-21", "ios", 1, "impression", "", 4),
            ] {
                try db.execute(sql: "INSERT INTO event_rollups VALUES (7, ?, ?, ?, ?, ?, ?)", arguments: [day, platform, test, type, detail, count])
            }
        }
        try before.close()

        // When it is opened by this Herald and migrated
        let after = try SQLiteAppDatabase(path: path, migrations: repositoryRoot.appendingPathComponent("migrations"))
        try after.migrate()

        // Then its past events are the default version's, by day, test or not, and type
        let rows = try await after.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT day, test, language, type, count FROM event_language_rollups ORDER BY 1, 2, 4")
                .map { "\($0["day"] as String) \($0["test"] as Int) '\($0["language"] as String)' \($0["type"] as String) \($0["count"] as Int)" }
        }
        #expect(rows == ["2026-09-20 0 '' click 3", "2026-09-20 0 '' impression 7", "2026-09-21 1 '' impression 4"])
        let counts = try after.events.counts(campaignID: 7, from: "2026-09-20", to: "2026-09-21")
        #expect(counts.topLanguages == [.init(language: nil, counts: [.impression: 7, .click: 3])])
        try after.close()
    }
}
