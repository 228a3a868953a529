import Foundation
@testable import HeraldDelivery
import HeraldDomain
import TestSupport
import Testing

/// Every conformance vector (`Tests/conformance/vectors/*.json`, format in `Tests/conformance/README.md`)
/// run against the Swift delivery client: one test case per file, each failure naming the step and what
/// differed. The web client runs the same files (`Tests/browser/test_conformance.py`).
@Suite("Conformance vectors")
struct ConformanceTests {
    static let folder = repositoryRoot.appendingPathComponent("Tests/conformance/vectors")
    static let files: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { $0.hasSuffix(".json") }.sorted()

    @Test("The vectors are there, and every one has a name, rules and steps")
    func present() throws {
        #expect(Self.files.count >= 10, "found \(Self.files)")
        for file in Self.files {
            let vector = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: Self.folder.appendingPathComponent(file)))
            #expect(vector["name"]?.string != nil && vector["rules"]?.array?.isEmpty == false && vector["steps"]?.array?.isEmpty == false, "\(file)")
        }
    }

    /// A row of the README's coverage table: its `rules` tags and the vectors it names.
    struct CoverageRow {
        let rule: String
        let tags: [String]
        let vectors: String
    }

    /// The rows of `## Coverage` in `Tests/conformance/README.md` (`| § | rule | rules | vectors |`).
    static func coverageRows() throws -> [CoverageRow] {
        let readme = try String(contentsOf: folder.deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
        guard let section = readme.range(of: "## Coverage") else { throw TestFailure("README.md has no ## Coverage section") }
        return readme[section.upperBound...].split(separator: "\n").filter { $0.hasPrefix("|") && !$0.hasPrefix("|---") && !$0.hasPrefix("| §") }
            .map { line in
                let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }
                let tags = cells.count > 2 ? cells[2].matches(of: /`([^`]+)`/).map { String($0.output.1) } : []
                return CoverageRow(rule: cells.count > 1 ? cells[1] : line.description, tags: tags, vectors: cells.count > 3 ? cells[3] : "")
            }
    }

    @Test("The coverage table and the vectors agree: every tag a vector uses is a row's, every row names vectors that exist and carry one of its tags, and every vector is named")
    func coverageTable() throws {
        let rows = try Self.coverageRows()
        #expect(rows.count >= 30, "read \(rows.count) rows")
        var rules: [String: Set<String>] = [:]
        for file in Self.files {
            let vector = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: Self.folder.appendingPathComponent(file)))
            rules[String(file.dropLast(5))] = Set((vector["rules"]?.array ?? []).compactMap(\.string))
        }
        let tabled = Set(rows.flatMap(\.tags))
        for (vector, tags) in rules.sorted(by: { $0.key < $1.key }) {
            #expect(tags.isSubset(of: tabled), "\(vector): \(tags.subtracting(tabled).sorted()) in no row of the coverage table")
            #expect(tags.allSatisfy { $0.wholeMatch(of: /[a-z]+(-[a-z]+)*/) != nil }, "\(vector): tags are lower-case words joined by -: \(tags.sorted())")
        }
        var named: Set<String> = []
        for row in rows {
            guard !row.tags.isEmpty else {
                // A rule the vectors cannot pin says where it is pinned instead.
                #expect(row.vectors.hasPrefix("not in vectors") || row.vectors.hasPrefix("every vector"), "\(row.rule): no tag and no vector")
                continue
            }
            let vectors = row.vectors.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(!vectors.isEmpty, "\(row.rule): no vector")
            for vector in vectors {
                named.insert(vector)
                guard let tags = rules[vector] else {
                    Issue.record("\(row.rule): there is no vector \(vector).json")
                    continue
                }
                #expect(!tags.isDisjoint(with: row.tags), "\(row.rule): \(vector) carries none of \(row.tags) (it has \(tags.sorted()))")
            }
        }
        #expect(Set(rules.keys).subtracting(named).isEmpty, "vectors no row names: \(Set(rules.keys).subtracting(named).sorted())")
    }

    @Test("Vector", arguments: files)
    func vector(_ file: String) async throws {
        let vector = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: Self.folder.appendingPathComponent(file)))
        let run = try await VectorRun(vector)
        let steps = vector["steps"]?.array ?? []
        for (index, step) in steps.enumerated() {
            let action = step["do"]?.string ?? "?"
            let outcomes = try await run.perform(step)
            for difference in await run.differences(from: step["expect"], outcomes: outcomes) {
                Issue.record("\(file): step \(index + 1) (\(action)): \(difference)")
            }
        }
        for difference in await run.eventDifferences(from: vector["events"]) {
            Issue.record("\(file): events at the end: \(difference)")
        }
        for difference in await run.discardDifferences(from: vector["discardCounts"]) {
            Issue.record("\(file): discard counts at the end: \(difference)")
        }
    }
}

/// One vector's client on its clock, storage, transport and renderer, driven step by step.
final class VectorRun: @unchecked Sendable {
    // Driven by one test task at a time; @unchecked because `client` is replaced on `restart`.
    let vector: JSONValue
    let start: Date
    let folder: TemporaryFolder
    let clock: TestClock
    let transport: VectorTransport
    let renderer = RecordingRenderer()
    let appDelegate = RecordingAppDelegate()
    let rendererAtStart: Bool
    private(set) var client: DeliveryClient
    private(set) var device: DeviceContext
    /// Images the vector holds until a `settleImage` step.
    private var pending: Set<String>
    /// Discards counted by the clients before the last restart: the vector counts the device's.
    private var earlierDiscards: [DiscardReason: Int] = [:]

    init(_ vector: JSONValue) async throws {
        self.vector = vector
        start = try VectorValue.date(vector["start"])
        let deviceJSON = vector["device"] ?? .object([])
        device = try VectorValue.device(deviceJSON, over: nil)
        let firstOpen = try deviceJSON["firstOpen"].map(VectorValue.date) ?? start
        let images = (vector["images"]?.members ?? []).compactMap { member in member.value.string.map { (member.key, $0) } }
        transport = VectorTransport(images: Dictionary(images, uniquingKeysWith: { $1 }))
        pending = Set(images.filter { $0.1 == "pending" }.map(\.0))
        transport.setFeed(Data((vector["feed"] ?? .null).text.utf8))
        folder = try TemporaryFolder()
        // The first start records the first open: the clock is there at it, then moves to `start`.
        clock = TestClock(firstOpen)
        rendererAtStart = vector["rendererAtStart"]?.bool ?? true
        client = try DeliveryClient(configuration: Self.configuration(vector, device: device, folder: folder.url, clock: clock, transport: transport))
        clock.advance(start.timeIntervalSince(firstOpen))
        await client.setDelegate(appDelegate)
        let refresh = await client.refreshFeed()
        guard refresh == .updated else { throw TestFailure("the client did not take the vector's feed: \(refresh)") }
        await client.waitForImageLoads(except: pending)
        if rendererAtStart { await client.setDisplayDelegate(renderer) }
        _ = renderer.takeStep()
    }

    static func configuration(_ vector: JSONValue, device: DeviceContext, folder: URL, clock: TestClock, transport: VectorTransport) -> DeliveryConfiguration {
        let options = vector["options"] ?? .object([])
        func seconds(_ key: String) -> TimeInterval { options[key]?.number ?? 10 }
        return DeliveryConfiguration(
            serverURL: URL(string: "https://herald.test/")!, apiKey: "hrld_vector", storageFolder: folder, device: device,
            transport: transport, clock: { clock.now }, random: { 0.5 }, installationID: vector["device"]?["installationId"]?.string,
            automaticDataCollectionByDefault: options["dataCollection"]?.bool ?? true,
            minimumInterval: options["minimumIntervalSeconds"]?.number, sessionTimeout: seconds("sessionTimeoutSeconds"),
            displayTimeout: seconds("displayTimeoutSeconds"), rendererTimeout: seconds("rendererTimeoutSeconds"))
    }

    /// Runs one step; returns the triggers it fired and what became of them.
    func perform(_ step: JSONValue) async throws -> [TriggerResult] {
        let action = step["do"]?.string ?? ""
        switch action {
        case "start":
            return await client.start()
        case "trigger":
            let event = try VectorValue.string(step["event"], "event")
            let properties = try VectorValue.properties(step["properties"])
            return [TriggerResult(event: event, outcome: await client.triggerEvent(event, properties: properties))]
        case "advance":
            clock.advance(try VectorValue.number(step["seconds"], "seconds"))
            await client.tick()
        case "impression":
            await client.impressionDetected(try await shownMessage(action))
        case "click":
            let clickAction = try VectorValue.enumeration(ClickAction.self, step["action"], "action")
            await client.messageClicked(try await shownMessage(action), action: clickAction, url: step["url"]?.string)
        case "dismiss":
            await client.messageDismissed(try await shownMessage(action), type: try VectorValue.enumeration(DismissType.self, step["type"], "type"))
        case "error":
            await client.displayError(try await shownMessage(action), code: try VectorValue.enumeration(DisplayErrorCode.self, step["code"], "code"))
        case "conversion":
            guard let shown = renderer.lastShown else { throw TestFailure("conversion: no message was shown yet") }
            await client.recordConversion(try VectorValue.string(step["event"], "event"), for: shown)
        case "displayNext":
            await client.displayNext()
        case "background":
            await client.appDidEnterBackground()
        case "foreground":
            return await client.appWillEnterForeground()
        case "restart":
            for (reason, count) in await client.discards { earlierDiscards[reason, default: 0] += count }
            client = try DeliveryClient(configuration: Self.configuration(vector, device: device, folder: folder.url, clock: clock, transport: transport))
            await client.setDelegate(appDelegate)
            if rendererAtStart { await client.setDisplayDelegate(renderer) }
        case "suppress":
            await client.setMessageDisplaySuppressed(try VectorValue.bool(step["value"], "value"))
        case "dataCollection":
            try await client.setAutomaticDataCollectionEnabled(try VectorValue.bool(step["value"], "value"))
        case "device":
            device = try VectorValue.device(step, over: device)
            await client.updateDevice(device)
        case "decide":
            renderer.answer(try VectorValue.enumeration(VectorValue.Decision.self, step["answer"], "answer").decision)
        case "registerRenderer":
            await client.setDisplayDelegate(renderer)
        case "settleImage":
            let url = try VectorValue.string(step["url"], "url")
            pending.remove(url)
            transport.settle(url, ok: try VectorValue.bool(step["ok"], "ok"))
        case "feed":
            transport.setFeed(Data((step["feed"] ?? .null).text.utf8))
            let refresh = await client.refreshFeed()
            guard refresh == .updated || refresh == .notModified else { throw TestFailure("feed: the client did not take it: \(refresh)") }
        case "pushReceived":
            if let feed = step["feed"] { transport.setFeed(Data(feed.text.utf8)) }
            await client.pushReceived(userInfo: VectorValue.userInfo(step["userInfo"]))
        case "pushOpened":
            return [await client.pushOpened(userInfo: VectorValue.userInfo(step["userInfo"]))]
        case "addToStack":
            let message = try CampaignJSON.decoder().decode(Message.self, from: Data((step["message"] ?? .null).text.utf8))
            let data = try step["data"].map { try CampaignJSON.decoder().decode(CustomData.self, from: Data($0.text.utf8)) } ?? CustomData()
            await client.addToStack(InAppMessage(local: message, data: data))
        default:
            throw TestFailure("unknown step \"\(action)\"")
        }
        await client.waitForImageLoads(except: pending)
        return []
    }

    /// The message in the slot, handed to the renderer: what a renderer's report is about.
    private func shownMessage(_ action: String) async throws -> InAppMessage {
        guard let message = await client.currentMessage else { throw TestFailure("\(action): no message is on screen") }
        return message
    }

    /// What differs from a step's `expect`, in words.
    func differences(from expect: JSONValue?, outcomes: [TriggerResult]) async -> [String] {
        await client.waitForImageLoads(except: pending)
        let happened = renderer.takeStep()
        guard let expect else { return [] }
        var differences: [String] = []
        func compare(_ what: String, _ expected: String, _ actual: String) {
            if expected != actual { differences.append("\(what): expected \(expected), got \(actual)") }
        }
        if let expected = expect["outcomes"] {
            compare("outcomes", VectorValue.outcomes(expected), outcomes.map(VectorValue.describe).joined(separator: ", "))
        }
        if let expected = expect["shown"] {
            // An id, or an object with the id as `campaign` and the version's `language` and `title`, and the
            // custom data the renderer got (`data`, ordered pairs).
            let isObject = !expected.members.isEmpty
            let campaign = isObject ? expected["campaign"] ?? .null : expected
            let language = isObject ? expected["language"] : expect["language"]
            let title = isObject ? expected["title"] : expect["title"]
            let shown = happened.shown.last
            compare("shown", VectorValue.id(campaign), shown.map(VectorValue.id) ?? "null")
            if happened.shown.count > 1 { differences.append("shown: \(happened.shown.count) messages in one step") }
            if let language { compare("language shown", language.string ?? "null", shown?.language ?? "null") }
            if let title { compare("title drawn", title.string ?? "null", shown?.message.title?.text ?? "null") }
            if isObject, let data = expected["data"] {
                compare("custom data", VectorValue.pairs(data), shown.map { VectorValue.pairs($0.data) } ?? "null")
            }
        }
        if let expected = expect["slot"] {
            let shown = await client.currentMessage
            let waiting = await client.messageWaitingForImages
            let slot = shown ?? waiting
            compare("slot", VectorValue.id(expected), slot.map(VectorValue.id) ?? "null")
        }
        if let expected = expect["stack"] {
            compare("stack", (expected.array ?? []).map(VectorValue.id).joined(separator: ", "),
                    await client.pendingMessages.map(VectorValue.id).joined(separator: ", "))
        }
        if let expected = expect["discards"] {
            var counts = earlierDiscards
            for (reason, count) in await client.discards { counts[reason, default: 0] += count }
            for member in expected.members {
                let actual = DiscardReason(rawValue: member.key).map { counts[$0, default: 0] } ?? -1
                compare("discards[\(member.key)]", member.value.number.map { String(Int($0)) } ?? "?", String(actual))
            }
        }
        if let expected = expect["withdrawn"] {
            compare("withdrawn", VectorValue.id(expected), happened.withdrawn.last.map(VectorValue.id) ?? "null")
        }
        if let expected = expect["noMatch"] {
            compare("noMatch", (expected.array ?? []).compactMap(\.string).joined(separator: ", "), happened.noMatch.joined(separator: ", "))
        }
        return differences
    }

    /// What differs between the vector's `discardCounts` and every count the client made (those uploaded,
    /// then those still waiting), summed per campaign, reason, day and installation id, whatever uploads split
    /// them into; a count sent twice must say the same both times.
    func discardDifferences(from expected: JSONValue?) async -> [String] {
        let uploaded = transport.uploadedDiscards
        var differences: [String] = []
        var sent: [String: Int] = [:]
        for count in uploaded {
            if let earlier = sent.updateValue(count.count, forKey: count.id), earlier != count.count {
                differences.append("count \(count.id) was sent as \(earlier), then as \(count.count)")
            }
        }
        var seen: Set<String> = []
        let counts = (uploaded + (await client.pendingDiscards)).filter { seen.insert($0.id).inserted }
        for id in counts.map(\.id) where !(UUID(uuidString: id) != nil && Array(id).count == 36 && Array(id)[14] == "7") {
            differences.append("count id \(id) is not a UUIDv7")
        }
        guard let expected = expected?.array else { return differences }
        let installationID = vector["device"]?["installationId"]?.string
        let wanted = VectorValue.discardLines(expected.map {
            ($0["campaignId"]?.number.map { Int64($0) } ?? -1, $0["reason"]?.string ?? "?", $0["day"]?.string ?? "?", $0["count"]?.number.map { Int($0) } ?? -1,
             $0["installationId"]?.bool == true ? "true" : "false")
        })
        let got = VectorValue.discardLines(counts.map {
            ($0.campaignId, $0.reason.rawValue, $0.day, $0.count, $0.installationId.map { $0 == installationID ? "true" : "another (\($0))" } ?? "false")
        })
        if wanted != got {
            differences.append("expected\n  \(wanted.joined(separator: "\n  "))\ngot\n  \(got.joined(separator: "\n  "))")
        }
        return differences
    }

    /// What differs between the vector's `events` and every event the client made: those uploaded (when
    /// the app went to the background), then those still queued.
    func eventDifferences(from expected: JSONValue?) async -> [String] {
        let events = transport.uploaded + (await client.queuedEvents)
        var differences: [String] = []
        let ids = events.map(\.id)
        if Set(ids).count != ids.count { differences.append("event ids repeat: \(ids)") }
        for id in ids where !(UUID(uuidString: id) != nil && Array(id).count == 36 && Array(id)[14] == "7") {
            differences.append("event id \(id) is not a UUIDv7")
        }
        guard let expected = expected?.array else { return differences }
        let installationID = vector["device"]?["installationId"]?.string
        let wanted = expected.map { VectorValue.line(expected: $0) }
        let compared = events.enumerated().map { index, event in
            VectorValue.line(event, expected: index < expected.count ? expected[index] : nil, start: start, installationID: installationID)
        }
        if wanted != compared {
            let got = events.map { VectorValue.line($0, expected: nil, start: start, installationID: installationID) }
            differences.append("expected\n  \(wanted.joined(separator: "\n  "))\ngot\n  \(got.joined(separator: "\n  "))")
        }
        return differences
    }
}
