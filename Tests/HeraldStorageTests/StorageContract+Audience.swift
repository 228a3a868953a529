import Foundation
import HeraldDomain
@testable import HeraldPostgres
@testable import HeraldStorage
import TestSupport
import Testing

/// The installations grouped as targeting reads them (`InstallationStore.profiles`), on every engine.
extension StorageContractTests {
    @Test(arguments: StorageEngine.available)
    func installationProfilesGroupWhatTargetingReadsLargestFirst(_ engine: StorageEngine) throws {
        let database = try EngineDatabase(engine)
        let shop = try database.stores.apps.create(name: "Shop", platforms: [.ios, .android], actor: .commandLine, now: Self.start)
        let blog = try database.stores.apps.create(name: "Blog", platforms: [.ios], actor: .commandLine, now: Self.start)
        let installations = database.stores.installations
        // Three Persian iPhones with tokens, one without; two German Android phones, one with a token; one
        // installation that said nothing of its version, language or country; and another app's device.
        for index in 0..<4 {
            _ = try installations.upsert(
                appID: shop.id, installationID: "ios-\(index)", registration: .sample(token: index < 3 ? "tok-\(index)" : nil), now: Self.start)
        }
        for index in 0..<2 {
            _ = try installations.upsert(
                appID: shop.id, installationID: "android-\(index)",
                registration: .sample(.android, provider: .fcm, token: index == 0 ? "fcm-\(index)" : nil, language: "de"), now: Self.start)
        }
        _ = try installations.upsert(
            appID: shop.id, installationID: "quiet",
            registration: InstallationRegistration(platform: .ios, notificationsAllowed: false), now: Self.start.addingTimeInterval(-60))
        _ = try installations.upsert(appID: blog.id, installationID: "ios-0", registration: .sample(token: "tok-blog"), now: Self.start)

        let profiles = try installations.profiles(appID: shop.id, limit: 10)
        #expect(profiles.installations == 7 && profiles.withToken == 4)
        #expect(profiles.groups == [
            .init(device: TargetedDevice(platform: .ios, appVersion: "2.1.0", language: "fa", country: "IR"), installations: 4, withToken: 3),
            .init(device: TargetedDevice(platform: .android, appVersion: "2.1.0", language: "de", country: "IR"), installations: 2, withToken: 1),
            .init(device: TargetedDevice(platform: .ios, appVersion: "", language: "", country: ""), installations: 1, withToken: 0),
        ])
        // Past the limit, only the totals count the rest.
        let largest = try installations.profiles(appID: shop.id, limit: 1)
        #expect(largest.groups.map(\.installations) == [4])
        #expect(largest.installations == 7 && largest.withToken == 4)
        #expect(try installations.profiles(appID: 9_999, limit: 10) == InstallationProfiles(groups: [], installations: 0, withToken: 0))

        // Every write moves the counts: a device registering again unchanged moves nothing; one that moves to
        // the iPhone group takes ios-0's token over; a pruned token, and retention deleting the quiet one.
        let persian = TargetedDevice(platform: .ios, appVersion: "2.1.0", language: "fa", country: "IR")
        _ = try installations.upsert(appID: shop.id, installationID: "ios-1", registration: .sample(token: "tok-1"), now: Self.start)
        _ = try installations.upsert(appID: shop.id, installationID: "android-1", registration: .sample(token: "tok-0"), now: Self.start)
        #expect(try installations.removeToken(appID: shop.id, provider: .fcm, token: "fcm-0", reason: "Unregistered", now: Self.start))
        #expect(try installations.deleteUnregistered(since: Self.start, limit: 10) == 1)
        #expect(try installations.profiles(appID: shop.id, limit: 10) == InstallationProfiles(
            groups: [.init(device: persian, installations: 5, withToken: 3),
                     .init(device: TargetedDevice(platform: .android, appVersion: "2.1.0", language: "de", country: "IR"), installations: 1, withToken: 0)],
            installations: 6, withToken: 3))
        #expect(try installations.profiles(appID: blog.id, limit: 10) == InstallationProfiles(
            groups: [.init(device: persian, installations: 1, withToken: 1)], installations: 1, withToken: 1))

        // The hourly upkeep folds what was appended for every app, estimated or not (PostgreSQL appends a change
        // per move, which nothing else would fold for an app nobody estimates); the counts read the same after.
        _ = try installations.upsert(appID: blog.id, installationID: "ios-1", registration: .sample(token: "tok-blog-1"), now: Self.start)
        _ = try installations.upsert(appID: shop.id, installationID: "android-0", registration: .sample(token: "tok-4"), now: Self.start)
        try installations.foldProfileChanges()
        if let postgres = database.stores as? PostgresAppDatabase {
            #expect(try postgres.read { try $0.one("SELECT count(*)::int8 FROM installation_profile_changes", as: Int64.self) } == 0)
        }
        #expect(try installations.profiles(appID: blog.id, limit: 10) == InstallationProfiles(
            groups: [.init(device: persian, installations: 2, withToken: 2)], installations: 2, withToken: 2))
        #expect(try installations.profiles(appID: shop.id, limit: 10) == InstallationProfiles(
            groups: [.init(device: persian, installations: 6, withToken: 4)], installations: 6, withToken: 4))
    }
}
