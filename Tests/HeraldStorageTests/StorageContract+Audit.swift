import Foundation
import HeraldDomain
@testable import HeraldStorage
import TestSupport
import Testing

/// The storage contract for audit lines, on every engine: a line's arguments read back as they were made,
/// and lines written without them read back without.
extension StorageContractTests {
    @Test(arguments: StorageEngine.available)
    func auditLinesKeepTheirArguments(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let stores = database.stores
        let shop = try stores.apps.create(name: "Shop «سلام»", platforms: [.ios, .web], actor: .commandLine, now: Self.start)
        _ = try stores.apps.addTestDevice(appID: shop.id, installationID: "iid-\u{1F600}", name: "Sara's \"phone\"", actor: .commandLine, now: Self.start)
        try stores.auditLog.record(.commandLine, action: "database.backup", subject: "/backups/herald.sqlite", details: "", at: Self.start)
        let lines = try stores.auditLog.page(offset: 0, limit: 10)
        #expect(lines.map(\.action) == ["database.backup", "device.add", "app.create"])
        #expect(lines[0].arguments == nil)
        let device = try #require(AuditLine.stored(lines[1].arguments))
        #expect(device.subjectKind == "test_device" && device.detailsKind == "installation")
        #expect(device.arguments == ["name": .text("Sara's \"phone\""), "app": .number(Int(shop.id)), "installation": .text("iid-\u{1F600}")])
        #expect(lines[1].details == "iid-\u{1F600}", "the English stays as it was")
        let app = try #require(AuditLine.stored(lines[2].arguments))
        #expect(app.arguments["platforms"] == .terms(["common.platform.ios", "common.platform.web"]))
        #expect(app.arguments["name"] == .text("Shop «سلام»"))
        #expect(lines[2].subject == "app \(shop.id) Shop «سلام»")
    }
}
