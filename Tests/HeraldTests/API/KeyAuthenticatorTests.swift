import Foundation
@testable import HeraldConsole
@testable import HeraldDelivery
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

/// The API key cache: live keys and unknown secrets are remembered apart, each bounded.
@Suite("API key cache")
struct KeyAuthenticatorTests {
    @Test("A flood of random API keys never evicts the keys apps use")
    func keyCacheFlood() async throws {
        let fixture = try await FeedTests.fixture()
        #expect(fixture.feed().status == 200)
        let keys = fixture.app.application.services.keys
        #expect(keys.remembered.live == 1)
        for _ in 0..<(KeyAuthenticator.maxUnknown + 500) {
            _ = try keys.authenticate(secret: "hrld_" + UUID().uuidString, now: fixture.app.clock.now)
        }
        // The unknown secrets were cleared when they filled their memory; the live key stayed.
        #expect(keys.remembered.live == 1)
        #expect(keys.remembered.unknown <= KeyAuthenticator.maxUnknown)
        #expect(fixture.feed().status == 200)
    }
}
