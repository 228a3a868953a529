import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// A file of campaigns, as export writes it and import reads it.
public struct CampaignExport: Codable, Sendable {
    public var schemaVersion: Int
    /// Always written; optional on input, so hand-written files need not invent one.
    public var exportedAt: Date?
    public var campaigns: [Campaign]

    public init(schemaVersion: Int, exportedAt: Date?, campaigns: [Campaign]) {
        self.schemaVersion = schemaVersion
        self.exportedAt = exportedAt
        self.campaigns = campaigns
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case schemaVersion, exportedAt, campaigns }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        schemaVersion = try container.decode(Int.self, forKey: .schemaVersion)
        exportedAt = try container.decodeIfPresent(Date.self, forKey: .exportedAt)
        campaigns = try container.decode([Campaign].self, forKey: .campaigns)
    }
}

/// What an import would do: the campaigns it would create, or every problem by campaign and path.
public struct ImportPlan: Sendable {
    public struct Problem: Sendable, Equatable {
        /// Counted from 1, as people count campaigns in a file.
        public let campaign: Int
        public let name: String
        public let path: String
        /// English, for the command line.
        public let message: String
        /// The key and arguments, for a page: `localizer.message(for: FieldProblem(path, text))`.
        public var text: ProblemText? = nil
    }

    /// Why a file could not be read at all, for the console to say in its language.
    public enum Unreadable: Sendable, Equatable {
        case noApp(Int64)
        case noCampaigns
        case newerVersion(Int)
        /// The file is not Campaign JSON: the JSON reader's reason in English (as the API says it), and the
        /// field it names, if any (whose problem the console says in the reader's language).
        case malformed(String, field: FieldProblem?, phrase: Phrase?)
    }

    public var campaigns: [Campaign]
    public var problems: [Problem]
    public var unreadableReason: Unreadable?

    /// Why the file could not be read at all, in English (the command line says this).
    public var unreadable: String? {
        switch unreadableReason {
        case .noApp(let id): "There is no app with id \(id)."
        case .noCampaigns: "The file holds no campaigns."
        case .newerVersion(let version): CampaignTransfer.newerVersionMessage(version)
        case .malformed(let message, _, _): message
        case nil: nil
        }
    }

    public var canImport: Bool { unreadableReason == nil && problems.isEmpty && !campaigns.isEmpty }
}

/// Export and import of Campaign JSON, shared by the console and the command line.
public struct CampaignTransfer: Sendable {
    let database: any HeraldDatabase

    public init(database: any HeraldDatabase) {
        self.database = database
    }

    /// Campaigns per page of an export: one read of a few hundred kilobytes of stored JSON, spliced
    /// without decoding, so another connection on the same thread waits a millisecond at most.
    static let exportPageSize = 256

    /// The campaigns that match `query`, as an export file made a page at a time while it is sent:
    /// memory stays flat whatever the number of campaigns. One campaign a line, in id order; pages are
    /// read one after the other (not in one transaction). `exported` hears the running count after each page.
    public func exportStream(_ query: CampaignQuery, now: Date, exported: @escaping @Sendable (Int) -> Void = { _ in }) -> StreamedBody {
        let campaigns = database.campaigns
        var lastID: Int64 = 0
        var count = 0
        var finished = false
        return StreamedBody {
            guard !finished else { return nil }
            let page = try campaigns.documents(matching: query, after: lastID, limit: Self.exportPageSize, now: now)
            var piece: [UInt8] = count == 0 ? Array("{\"schemaVersion\":\(CampaignJSON.schemaVersion),\"exportedAt\":\"\(UTCTime.rfc3339(now))\",\"campaigns\":[".utf8) : []
            for document in page {
                // The stored document is an object without `id` and `status`: they go first, then its own keys.
                piece += Array((count == 0 ? "\n" : ",\n").utf8)
                let keys = document.json.utf8.dropFirst()
                piece += Array("{\"id\":\(document.id),\"status\":\"\(document.status.rawValue)\"".utf8)
                if keys.first != UInt8(ascii: "}") { piece.append(UInt8(ascii: ",")) }
                piece += keys
                count += 1
                lastID = document.id
            }
            exported(count)
            if page.count < Self.exportPageSize {
                finished = true
                piece += Array("\n]}\n".utf8)
            }
            return piece
        }
    }

    /// One export file in memory, for exports known to be small (one campaign).
    public func encode(_ export: CampaignExport) throws -> Data {
        try Self.fileEncoder().encode(export)
    }

    private static func fileEncoder() -> JSONEncoder {
        let encoder = CampaignJSON.encoder()
        encoder.outputFormatting.insert(.prettyPrinted)
        return encoder
    }

    /// Reads an export file (or one campaign, or an array of them) for `appID`, and checks every campaign.
    public func plan(_ data: Data, appID: Int64) throws -> ImportPlan {
        guard try database.apps.find(id: appID) != nil else {
            return ImportPlan(campaigns: [], problems: [], unreadableReason: .noApp(appID))
        }
        let campaigns: [Campaign]
        do {
            campaigns = try Self.read(data)
        } catch {
            if case NewerVersion.found(let version) = error {
                return ImportPlan(campaigns: [], problems: [], unreadableReason: .newerVersion(version))
            }
            guard let malformed = MalformedJSON(reading: error) else { throw error }
            return ImportPlan(
                campaigns: [], problems: [], unreadableReason: .malformed(malformed.message, field: malformed.field, phrase: malformed.phrase))
        }
        if campaigns.isEmpty { return ImportPlan(campaigns: [], problems: [], unreadableReason: .noCampaigns) }
        var problems: [ImportPlan.Problem] = []
        let prepared = campaigns.enumerated().map { index, original -> Campaign in
            var campaign = original
            campaign.app = appID
            for problem in campaign.problems(for: .draft) {
                problems.append(.init(campaign: index + 1, name: campaign.name, path: problem.path, message: problem.message, text: problem.text))
            }
            return campaign.content
        }
        return ImportPlan(campaigns: prepared, problems: problems, unreadableReason: nil)
    }

    /// Creates the planned campaigns as drafts, all in one transaction; nothing when any is invalid.
    public func apply(_ plan: ImportPlan, actor: AuditActor, now: Date) throws -> [Int64] {
        guard plan.canImport else { return [] }
        return try database.campaigns.createAll(plan.campaigns, state: .draft, actor: actor, now: now)
    }

    /// A file written by a newer Herald, whose Campaign JSON version this one does not read.
    private enum NewerVersion: Error { case found(Int) }

    static func newerVersionMessage(_ version: Int) -> String {
        "This file uses Campaign JSON version \(version); this Herald reads up to version \(CampaignJSON.schemaVersion). Import it with a newer Herald."
    }

    private static func read(_ data: Data) throws -> [Campaign] {
        struct Versioned: Decodable { let schemaVersion: Int? }
        try JSONBody.check(Array(data))  // before any decoder sees it, the version peek included
        let trimmed = data.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        if trimmed.first == UInt8(ascii: "[") { return try JSONBody.decode([Campaign].self, from: Array(data)) }
        if let version = (try? CampaignJSON.decoder().decode(Versioned.self, from: data))?.schemaVersion {
            guard version <= CampaignJSON.schemaVersion else { throw NewerVersion.found(version) }
            return try JSONBody.decode(CampaignExport.self, from: Array(data)).campaigns
        }
        return [try JSONBody.decode(Campaign.self, from: Array(data))]
    }
}
