import Crypto
import Foundation
import HeraldDomain
@testable import HeraldStorage
import TestSupport
import Testing

/// The storage contract for apps, their keys, test devices, origins and push credentials, on every engine.
extension StorageContractTests {
    @Test(arguments: StorageEngine.available)
    func appsAreNamedOnceAndListedByFoldedName(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let apps = database.stores.apps
        let shop = try apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: Self.start)
        _ = try apps.create(name: "ärzte", platforms: [.web], actor: .commandLine, now: Self.start)
        _ = try apps.create(name: "blog", platforms: [], actor: .commandLine, now: Self.start)
        #expect(throws: AppStoreError.nameTaken) { try apps.create(name: "SHOP", platforms: [.web], actor: .commandLine, now: Self.start) }
        #expect(try apps.all().map(\.name) == ["blog", "Shop", "ärzte"])
        let found = try #require(try apps.find(id: shop.id))
        #expect(found.platforms == [.ios, .android])
        #expect(found.minIntervalSeconds == 30)
        #expect(found.createdAt.asStored == Self.start.asStored)
        #expect(try apps.find(id: 9_999) == nil)

        try apps.setMinInterval(appID: shop.id, seconds: 0, actor: .commandLine, now: Self.start)
        #expect(try apps.find(id: shop.id)?.minIntervalSeconds == 0)
        #expect(try apps.pushSettings(appID: shop.id) == AppPushSettings())
        try apps.setPushSettings(AppPushSettings(dailyCap: 3, refreshOnChange: true), appID: shop.id, actor: .commandLine, now: Self.start)
        #expect(try apps.pushSettings(appID: shop.id) == AppPushSettings(dailyCap: 3, refreshOnChange: true))
        #expect(try apps.pushSettings(appID: 9_999) == AppPushSettings())
        #expect(try database.stores.auditLog.page(offset: 0, limit: 3).map(\.action) == ["app.push.settings", "app.settings", "app.create"])
    }

    @Test(arguments: StorageEngine.available)
    func testDevicesAndOriginsBelongToTheirApp(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let apps = database.stores.apps
        let shop = try apps.create(name: "Shop", platforms: [.web], actor: .commandLine, now: Self.start)
        let blog = try apps.create(name: "Blog", platforms: [.web], actor: .commandLine, now: Self.start)
        let phone = try apps.addTestDevice(appID: shop.id, installationID: "install-1", name: "Sara's phone", actor: .commandLine, now: Self.start)
        _ = try apps.addTestDevice(appID: shop.id, installationID: "install-2", name: "android tablet", actor: .commandLine, now: Self.start)
        _ = try apps.addTestDevice(appID: blog.id, installationID: "install-1", name: "Blog phone", actor: .commandLine, now: Self.start)
        #expect(throws: AppStoreError.deviceTaken) {
            try apps.addTestDevice(appID: shop.id, installationID: "install-1", name: "again", actor: .commandLine, now: Self.start)
        }
        #expect(try apps.testDevices(appID: shop.id).map(\.name) == ["android tablet", "Sara's phone"])
        // Another app's device is not removed through this one.
        try apps.removeTestDevice(id: phone.id, appID: blog.id, actor: .commandLine, now: Self.start)
        #expect(try apps.testDevices(appID: shop.id).count == 2)
        try apps.removeTestDevice(id: phone.id, appID: shop.id, actor: .commandLine, now: Self.start)
        #expect(try apps.testDevices(appID: shop.id).map(\.installationID) == ["install-2"])
        #expect(try database.stores.auditLog.latest(action: "device.remove")?.details == "install-1")

        let origin = try apps.addOrigin(appID: shop.id, origin: "https://shop.example", actor: .commandLine, now: Self.start)
        _ = try apps.addOrigin(appID: shop.id, origin: "http://localhost:8080", actor: .commandLine, now: Self.start)
        #expect(throws: AppStoreError.originTaken) {
            try apps.addOrigin(appID: shop.id, origin: "https://shop.example", actor: .commandLine, now: Self.start)
        }
        #expect(try apps.origins(appID: shop.id).map(\.origin) == ["http://localhost:8080", "https://shop.example"])
        #expect(try apps.removeOrigin(id: origin.id, appID: blog.id, actor: .commandLine, now: Self.start) == nil)
        #expect(try apps.removeOrigin(id: origin.id, appID: shop.id, actor: .commandLine, now: Self.start)?.origin == "https://shop.example")
        #expect(try apps.allOrigins().map(\.origin) == ["http://localhost:8080"])
    }

    /// Origins added at once from many threads through two handles (two instances) stop at the limit.
    @Test(arguments: StorageEngine.available)
    func racingOriginsStopAtTheLimit(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let handles = [database.stores, try database.open()]
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.web], actor: .commandLine, now: Self.start)
        DispatchQueue.concurrentPerform(iterations: AllowedOrigin.maxPerApp + 20) { index in
            _ = try? handles[index % 2].apps.addOrigin(appID: shop.id, origin: "https://\(index).example", actor: .commandLine, now: Self.start)
        }
        #expect(try database.stores.apps.origins(appID: shop.id).count == AllowedOrigin.maxPerApp)
    }

    @Test(arguments: StorageEngine.available)
    func keysAuthenticateUntilRevoked(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.ios], actor: .commandLine, now: Self.start)
        let keys = database.stores.apiKeys
        let (key, secret) = try keys.create(appID: shop.id, name: "CI «deploy»", scopes: [.feedRead, .eventsWrite], actor: .commandLine, now: Self.start)
        let (newer, _) = try keys.create(appID: shop.id, name: "second", scopes: [.campaignsWrite], actor: .commandLine, now: Self.start.addingTimeInterval(1))
        #expect(secret.hasPrefix(key.prefix))
        let found = try #require(try keys.authenticate(secret: secret))
        #expect(found.id == key.id)
        #expect(found.scopes == [.feedRead, .eventsWrite])
        #expect(try keys.authenticate(secret: secret + "x") == nil)
        #expect(try keys.all(appID: shop.id).map(\.id) == [newer.id, key.id])

        try keys.markUsed(found, now: Self.start.addingTimeInterval(120))
        let used = try #require(try keys.find(id: key.id))
        #expect(used.lastUsedAt?.asStored == Self.start.addingTimeInterval(120).asStored)

        // Key actors are written into the audit log with their key.
        try database.stores.auditLog.record(.key(id: key.id, name: key.name), action: "test.key", subject: "s", details: "", at: Self.start)
        #expect(try database.stores.auditLog.latest(action: "test.key")?.actor == "API key CI «deploy»")

        #expect(try keys.revoke(used, actor: .commandLine, now: Self.start.addingTimeInterval(200)))
        #expect(try keys.revoke(used, actor: .commandLine, now: Self.start.addingTimeInterval(300)) == false)
        #expect(try keys.authenticate(secret: secret) == nil)
        #expect(try keys.find(id: key.id)?.revokedAt?.asStored == Self.start.addingTimeInterval(200).asStored)
    }

    @Test(arguments: StorageEngine.available)
    func pushCredentialsAreSealedAndReadBack(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: Self.start)
        let box = SecretBox(key: SymmetricKey(size: .bits256))
        let credentials = database.stores.pushCredentials(box: box)
        #expect(try credentials.setup(appID: shop.id) == PushSetup())
        let apns = APNsCredentials(keyPEM: "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n", keyID: "KEY123", teamID: "TEAM", topic: "com.example.shop")
        try credentials.setAPNs(apns, appID: shop.id, actor: .commandLine, now: Self.start)
        let fcm = FCMCredentials(serviceAccountJSON: Data(#"{"type": "service_account", "x": "\u0000"}"#.utf8), projectID: "shop", clientEmail: "push@shop.iam", url: "http://127.0.0.1:1")
        try credentials.setFCM(fcm, appID: shop.id, actor: .commandLine, now: Self.start)
        let opened = try credentials.credentials(appID: shop.id)
        #expect(opened.apns == apns)
        #expect(opened.fcm == fcm)
        let setup = try credentials.setup(appID: shop.id)
        #expect(setup.apnsKeyID == "KEY123")
        #expect(setup.fcmClientEmail == "push@shop.iam")
        #expect(setup.updatedBy == "command line")

        try credentials.setAPNs(nil, appID: shop.id, actor: .commandLine, now: Self.start)
        #expect(try credentials.credentials(appID: shop.id).apns == nil)
        #expect(try credentials.credentials(appID: shop.id).fcm == fcm)
        #expect(try credentials.setup(appID: shop.id).hasAPNs == false)
        // Another key cannot open them.
        #expect(throws: (any Error).self) { try database.stores.pushCredentials(box: SecretBox(key: SymmetricKey(size: .bits256))).credentials(appID: shop.id) }
        #expect(try database.stores.auditLog.page(offset: 0, limit: 3).map(\.action) == ["app.push.apns.remove", "app.push.fcm.set", "app.push.apns.set"])
    }
}
