import Foundation
import HeraldDomain
@testable import HeraldStorage
import PropertyBased
import Synchronization
import TestSupport
import Testing

/// The storage contract for campaigns and their revisions, on every engine.
extension StorageContractTests {
    static func inApp(_ app: Int64, _ name: String, priority: Int = 5, start: Date? = nil, end: Date? = nil, testOnDevice: Bool = false) -> Campaign {
        Campaign(
            app: app, name: name, priority: priority, schedule: Schedule(start: start, end: end), testOnDevice: testOnDevice,
            message: Message(layout: .modal, title: .init(text: "Hi \(name)")))
    }

    /// Two apps, for what belongs to one and not the other.
    static func shopAndBlog(_ database: EngineDatabase) throws -> (shop: App, blog: App) {
        (try database.stores.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: start),
         try database.stores.apps.create(name: "Blog", platforms: [.web], actor: .commandLine, now: start))
    }

    @Test(arguments: StorageEngine.available)
    func campaignsKeepTheirRevisionsAndRefuseStaleSaves(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: Self.start)
        let campaigns = database.stores.campaigns
        let start = Self.start.addingTimeInterval(3600.5)
        let id = try campaigns.create(Self.inApp(shop.id, "Frühling «سلام»", start: start), state: .draft, actor: .commandLine, now: Self.start)
        let created = try #require(try campaigns.find(id: id))
        #expect(created.campaign.id == id)
        #expect(created.campaign.name == "Frühling «سلام»")
        #expect(created.revision == 1)
        #expect(created.state == .draft)
        #expect(created.startedAt == nil)
        #expect(created.createdAt.asStored == Self.start.asStored)
        #expect(created.updatedBy == "command line")
        #expect(created.status(at: Self.start) == .draft)

        var edited = created.campaign
        edited.name = "Frühling 2"
        edited.app = 9_999  // the app cannot change
        let later = Self.start.addingTimeInterval(10)
        #expect(try campaigns.update(edited, expectedRevision: 1, actor: .commandLine, now: later) == 2)
        #expect(throws: CampaignStoreError.staleRevision(expected: 1, current: 2)) {
            try campaigns.update(edited, expectedRevision: 1, actor: .commandLine, now: later)
        }
        #expect(try campaigns.update(edited, expectedRevision: 2, state: .published, actor: .commandLine, now: later) == 3)
        let published = try #require(try campaigns.find(id: id))
        #expect(published.campaign.app == shop.id)
        #expect(published.state == .published)
        #expect(published.startedAt?.asStored == start.asStored, "published before its start: it starts at the start")
        #expect(published.updatedAt.asStored == later.asStored)
        #expect(published.status(at: later) == .scheduled)

        try campaigns.setState(id: id, to: .paused, actor: .commandLine, now: later)
        try campaigns.setState(id: id, to: .published, actor: .commandLine, now: later)
        #expect(try campaigns.find(id: id)?.startedAt?.asStored == start.asStored)
        let revisions = try campaigns.revisions(id: id)
        #expect(revisions.map(\.revision) == [5, 4, 3, 2, 1])
        #expect(revisions.map(\.state) == [.published, .paused, .published, .draft, .draft])
        #expect(revisions.last?.campaign.name == "Frühling «سلام»")
        #expect(revisions.first?.campaign.id == id)
        #expect(revisions.first?.author == "command line")
        #expect(revisions.last?.createdAt.asStored == Self.start.asStored)
        #expect(try database.stores.auditLog.page(offset: 0, limit: 5).map(\.action) == [
            "campaign.resume", "campaign.pause", "campaign.publish", "campaign.update", "campaign.create",
        ])
        #expect(try database.stores.auditLog.latest(action: "campaign.create")?.details == "draft")

        #expect(try campaigns.deleteDraft(id: id, actor: .commandLine, now: later) == false, "published: not a draft")
        var missing = edited
        missing.id = 9_999
        #expect(throws: CampaignStoreError.notFound) { try campaigns.update(missing, expectedRevision: 1, actor: .commandLine, now: later) }
        #expect(throws: CampaignStoreError.notFound) { try campaigns.setState(id: 9_999, to: .published, actor: .commandLine, now: later) }
        missing.id = nil
        #expect(throws: CampaignStoreError.notFound) { try campaigns.update(missing, expectedRevision: 1, actor: .commandLine, now: later) }

        let draft = try campaigns.create(Self.inApp(shop.id, "Draft"), state: .draft, actor: .commandLine, now: later)
        #expect(try campaigns.deleteDraft(id: draft, actor: .commandLine, now: later))
        #expect(try campaigns.find(id: draft) == nil)
        #expect(try campaigns.revisions(id: draft).isEmpty)
        #expect(try campaigns.deleteDraft(id: draft, actor: .commandLine, now: later) == false)
        #expect(try database.stores.auditLog.latest(action: "campaign.delete")?.subject == "campaign \(draft) Draft")
    }

    /// Saves over one revision at once, through two handles (two instances): exactly one is taken.
    @Test(arguments: StorageEngine.available)
    func racingSavesOverOneRevisionTakeOne(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let handles = [database.stores, try database.open()]
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: Self.start)
        let id = try database.stores.campaigns.create(Self.inApp(shop.id, "Raced"), state: .draft, actor: .commandLine, now: Self.start)
        let campaign = try #require(try database.stores.campaigns.find(id: id)).campaign
        let saved = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            var edit = campaign
            edit.name = "Raced \(index)"
            if (try? handles[index % 2].campaigns.update(edit, expectedRevision: 1, actor: .commandLine, now: Self.start)) != nil {
                saved.add(1, ordering: .relaxed)
            }
        }
        #expect(saved.load(ordering: .relaxed) == 1)
        #expect(try database.stores.campaigns.revisions(id: id).map(\.revision) == [2, 1])
    }

    @Test(arguments: StorageEngine.available)
    func theCampaignListFiltersSortsPagesAndSearches(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let (shop, blog) = try Self.shopAndBlog(database)
        let campaigns = database.stores.campaigns
        let now = Self.start.addingTimeInterval(86_400)
        func make(_ app: Int64, _ name: String, priority: Int, start: Date? = nil, end: Date? = nil, state: CampaignState, at offset: TimeInterval) throws -> Int64 {
            try campaigns.create(
                Self.inApp(app, name, priority: priority, start: start, end: end), state: state, actor: .commandLine,
                now: Self.start.addingTimeInterval(offset))
        }
        let zebra = try make(shop.id, "Zebra sale", priority: 3, state: .published, at: 1)
        let apple = try make(shop.id, "apple Pie", priority: 3, start: now.addingTimeInterval(60), state: .published, at: 2)
        let apfel = try make(shop.id, "Äpfel", priority: 1, end: now.addingTimeInterval(-1), state: .published, at: 3)
        let unicode = try make(shop.id, "ünïcode_%", priority: 9, start: now.addingTimeInterval(-60), state: .paused, at: 4)
        let sommer = try make(shop.id, "Sommer 50%", priority: 5, state: .draft, at: 5)
        let persian = try make(blog.id, "تخفیف ویژه", priority: 2, state: .archived, at: 6)
        let stopped = try make(blog.id, "Stopped", priority: 10, state: .draft, at: 7)
        try campaigns.setState(id: stopped, to: .stopped, actor: .commandLine, now: Self.start.addingTimeInterval(8))

        func ids(_ configure: (inout CampaignQuery) -> Void) throws -> [Int64] {
            var query = CampaignQuery()
            configure(&query)
            return try campaigns.list(query, now: now).campaigns.map(\.id)
        }
        // ASCII letters folded, then bytes: SQLite's NOCASE.
        #expect(try ids { $0.sort = .name } == [apple, sommer, stopped, zebra, apfel, unicode, persian])
        #expect(try ids { $0.sort = .updated } == [stopped, persian, sommer, unicode, apfel, apple, zebra])
        #expect(try ids { $0.sort = .priority } == [apfel, persian, apple, zebra, sommer, unicode, stopped])
        #expect(try ids { $0.sort = .start } == [unicode, apple, zebra, apfel, sommer, persian, stopped])

        #expect(try ids { $0.status = .running } == [zebra])
        #expect(try ids { $0.status = .scheduled } == [apple])
        #expect(try ids { $0.status = .ended; $0.sort = .name } == [stopped, apfel])
        #expect(try ids { $0.status = .paused } == [unicode])
        #expect(try ids { $0.status = .draft } == [sommer])
        #expect(try ids { $0.status = .archived } == [persian])
        #expect(try ids { $0.appID = blog.id; $0.sort = .name } == [stopped, persian])
        #expect(try ids { $0.appID = 9_999 }.isEmpty)

        // Search: a substring with ASCII letters folded and nothing else; % and _ are themselves.
        #expect(try ids { $0.search = "APPLE" } == [apple])
        #expect(try ids { $0.search = "  pie " } == [apple])
        #expect(try ids { $0.search = "Äpf" } == [apfel])
        #expect(try ids { $0.search = "äpf" }.isEmpty, "non-ASCII letters are not folded")
        #expect(try ids { $0.search = "50%" } == [sommer])
        #expect(try ids { $0.search = "_" } == [unicode])
        #expect(try ids { $0.search = "%" ; $0.sort = .name } == [sommer, unicode])
        #expect(try ids { $0.search = "ویژه" } == [persian])
        #expect(try ids { $0.search = "a"; $0.appID = shop.id; $0.sort = .name } == [apple, zebra])
        // NUL, which no name holds and PostgreSQL's text cannot carry (schemathesis sent `q=%00…`): nothing.
        #expect(try ids { $0.search = "App\u{0}le" }.isEmpty)

        var paged = CampaignQuery()
        paged.sort = .name
        paged.pageSize = 3
        paged.page = 2
        let page = try campaigns.list(paged, now: now)
        #expect(page.total == 7)
        #expect(page.campaigns.map(\.id) == [zebra, apfel, unicode])
        paged.page = 3
        #expect(try campaigns.list(paged, now: now).campaigns.map(\.id) == [persian])
        paged.page = .max
        let far = try campaigns.list(paged, now: now)
        #expect(far.campaigns.isEmpty)
        #expect(far.total == 7)

        var one = CampaignQuery()
        one.search = "apple"
        let summary = try #require(try campaigns.list(one, now: now).campaigns.first)
        #expect(summary.asStored == CampaignSummary(
            id: apple, appID: shop.id, appName: "Shop", name: "apple Pie", state: .published, status: .scheduled, layout: "modal", priority: 3,
            startAt: now.addingTimeInterval(60), endAt: nil, updatedAt: Self.start.addingTimeInterval(2), updatedBy: "command line").asStored)
    }

    @Test(arguments: StorageEngine.available)
    func feedCandidatesArePublishedInAppCampaignsAndLiveTests(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let (shop, blog) = try Self.shopAndBlog(database)
        let campaigns = database.stores.campaigns
        func make(_ campaign: Campaign, _ state: CampaignState) throws -> Int64 {
            try campaigns.create(campaign, state: state, actor: .commandLine, now: Self.start)
        }
        let published = try make(Self.inApp(shop.id, "Published"), .published)
        let ended = try make(Self.inApp(shop.id, "Ended", end: Self.start.addingTimeInterval(-10)), .published)
        _ = try make(Self.inApp(shop.id, "Draft"), .draft)
        let testDraft = try make(Self.inApp(shop.id, "Test draft", testOnDevice: true), .draft)
        let testPaused = try make(Self.inApp(shop.id, "Test paused", testOnDevice: true), .paused)
        _ = try make(Self.inApp(shop.id, "Test archived", testOnDevice: true), .archived)
        _ = try make(Self.inApp(shop.id, "Test stopped", testOnDevice: true), .stopped)
        _ = try make(Self.inApp(shop.id, "Paused"), .paused)
        _ = try make(Campaign(app: shop.id, name: "Push", push: PushNotification(title: "Hi")), .published)
        _ = try make(Self.inApp(blog.id, "Blog's"), .published)
        let candidates = try campaigns.feedCandidates(appID: shop.id)
        // The feed decides about schedules: an ended published campaign is still a candidate.
        #expect(candidates.map(\.id) == [published, ended, testDraft, testPaused])
        #expect(candidates.first?.campaign.name == "Published")
        #expect(try campaigns.feedCandidates(appID: 9_999).isEmpty)
    }

    @Test(arguments: StorageEngine.available)
    func createAllStoresEveryCampaignOrNone(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: Self.start)
        let campaigns = database.stores.campaigns
        let audited = try database.stores.auditLog.count()
        // The second names an app that does not exist: the first is not kept either.
        #expect(throws: (any Error).self) {
            try campaigns.createAll([Self.inApp(shop.id, "One"), Self.inApp(9_999, "Two")], state: .draft, actor: .commandLine, now: Self.start)
        }
        // A priority the table refuses, after a good one.
        #expect(throws: (any Error).self) {
            try campaigns.createAll([Self.inApp(shop.id, "One"), Self.inApp(shop.id, "Eleven", priority: 11)], state: .draft, actor: .commandLine, now: Self.start)
        }
        // A name no engine keeps as text (validation refuses control characters first).
        #expect(throws: CampaignStoreError.unreadable(path: "name", reason: "it holds a NUL character, which no engine keeps as text")) {
            try campaigns.createAll([Self.inApp(shop.id, "One"), Self.inApp(shop.id, "N\u{0}UL")], state: .draft, actor: .commandLine, now: Self.start)
        }
        #expect(try campaigns.list(CampaignQuery(), now: Self.start).total == 0)
        #expect(try database.stores.auditLog.count() == audited)

        let ids = try campaigns.createAll(
            [Self.inApp(shop.id, "One"), Self.inApp(shop.id, "Two")], state: .published, actor: .commandLine, now: Self.start)
        #expect(ids.count == 2)
        #expect(try ids.map { try campaigns.find(id: $0)?.campaign.name } == ["One", "Two"])
        #expect(try ids.map { try campaigns.find(id: $0)?.startedAt?.asStored } == [Self.start.asStored, Self.start.asStored])
        #expect(try campaigns.createAll([], state: .draft, actor: .commandLine, now: Self.start).isEmpty)
    }

    @Test(arguments: StorageEngine.available)
    func documentsArePagedByID(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let (shop, blog) = try Self.shopAndBlog(database)
        let campaigns = database.stores.campaigns
        var ids: [Int64] = []
        for index in 0..<5 {
            ids.append(try campaigns.create(Self.inApp(shop.id, "Kampagne \(index) ✓"), state: index == 0 ? .published : .draft, actor: .commandLine, now: Self.start))
        }
        _ = try campaigns.create(Self.inApp(blog.id, "Other app"), state: .draft, actor: .commandLine, now: Self.start)
        var query = CampaignQuery()
        query.appID = shop.id
        query.sort = .name
        query.page = 3  // the sort and page do not apply
        let first = try campaigns.documents(matching: query, after: 0, limit: 2, now: Self.start)
        #expect(first.map(\.id) == Array(ids[0..<2]))
        #expect(first.map(\.status) == [.running, .draft])
        let decoded = try CampaignSave.decode(try #require(first.first).json)
        #expect(decoded.name == "Kampagne 0 ✓")
        #expect(decoded.id == nil, "the document leaves the id out")
        let rest = try campaigns.documents(matching: query, after: ids[1], limit: 10, now: Self.start)
        #expect(rest.map(\.id) == Array(ids[2...]))
        #expect(try campaigns.documents(matching: query, after: ids[4], limit: 10, now: Self.start).isEmpty)
        query.status = .running
        #expect(try campaigns.documents(matching: query, after: 0, limit: 10, now: Self.start).map(\.id) == [ids[0]])
        query = CampaignQuery()
        query.search = "KAMPAGNE 3"
        #expect(try campaigns.documents(matching: query, after: 0, limit: 10, now: Self.start).map(\.id) == [ids[3]])
    }

    /// The list's SQL computes each campaign's status as `CampaignStatus(state:schedule:at:)` does, for every
    /// state and every start and end around `now` (none, a day or a millisecond before, at, a millisecond or a
    /// day after), and a status filter lists exactly the campaigns of that status.
    @Test(arguments: StorageEngine.available)
    func theListsStatusIsTheDomainsRule(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: Self.start)
        let campaigns = database.stores.campaigns
        // Whole milliseconds, as documents carry them, so each time reads back as it was sent.
        let milliseconds = Int64(Self.start.timeIntervalSince1970 * 1000) + 30 * 86_400_000
        func at(_ offset: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds + offset) / 1000) }
        let now = at(0)
        let times: [Date?] = [nil] + [-86_400_000, -1, 0, 1, 86_400_000].map(at)
        var expected: [Int64: CampaignStatus] = [:]
        for state in CampaignState.allCases {
            for start in times {
                for end in times {
                    var campaign = Campaign(app: shop.id, name: "\(state) \(expected.count)", message: Message(layout: .modal, title: .init(text: "Hi")))
                    campaign.schedule = Schedule(start: start, end: end)
                    let id = try campaigns.create(campaign, state: state, actor: .commandLine, now: Self.start)
                    expected[id] = CampaignStatus(state: state, schedule: campaign.schedule, at: now)
                }
            }
        }
        var query = CampaignQuery()
        query.pageSize = expected.count
        let listed = try campaigns.list(query, now: now)
        #expect(listed.total == expected.count)
        for summary in listed.campaigns {
            #expect(summary.status == expected[summary.id], "\(summary.name): start \(String(describing: summary.startAt)), end \(String(describing: summary.endAt))")
            #expect(try campaigns.find(id: summary.id)?.status(at: now) == summary.status)
        }
        for status in CampaignStatus.allCases {
            query.status = status
            let ids = Set(try campaigns.list(query, now: now).campaigns.map(\.id))
            #expect(ids == Set(expected.filter { $0.value == status }.keys), "\(status)")
            #expect(!ids.isEmpty, "every status is reached: \(status)")
        }
    }

    @Test("Decoded documents are kept by their text, at most 16 MB of it: past that the table starts again, and a text over a quarter of it is not kept")
    func decodedDocumentsStayBounded() {
        var kept = CampaignSave.DecodedDocuments()
        let campaign = Campaign(app: 1, name: "Kept", message: Message(layout: .modal, title: .init(text: "Kept")))
        let eighth = CampaignSave.DecodedDocuments.byteLimit / 8
        for index in 0..<8 { kept.keep(campaign, for: String(repeating: "a", count: eighth - 1) + String(index)) }
        kept.keep(campaign, for: String(repeating: "a", count: eighth - 1) + "0")
        #expect(kept.campaigns.count == 8, "the same text again is one entry")
        kept.keep(campaign, for: "b")
        #expect(kept.campaigns.count == 1 && kept.campaigns["b"] == campaign)
        kept.keep(campaign, for: String(repeating: "c", count: CampaignSave.DecodedDocuments.byteLimit / 4 + 1))
        #expect(kept.campaigns.count == 1)
    }
}
