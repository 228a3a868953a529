import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldStorage
import Synchronization
import Testing

@Suite("Audience estimator: an app's groups read once for estimates asked together, again when they age or change")
struct AudienceEstimatorTests {
    @Test("Eight estimates asked at once of an app whose groups are not kept make one read; a new installation or a minute makes another")
    func coldEstimatesShareOneRead() throws {
        let reads = Mutex(0)
        let estimator = AudienceEstimator { appID, _ in
            reads.withLock { $0 += 1 }
            // Long enough that every thread below asks while the first read is under way.
            Thread.sleep(forTimeInterval: 0.2)
            let device = TargetedDevice(platform: .ios, appVersion: "1.0", language: "fa", country: "IR")
            let installations = Int(appID) * 10
            return InstallationProfiles(
                groups: [.init(device: device, installations: installations, withToken: 4)], installations: installations, withToken: 4)
        }
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let answers = Mutex<[Int]>([])
        let finished = DispatchGroup()
        for _ in 0..<8 {
            finished.enter()
            Thread {
                let answer = try? estimator.estimate(Targeting(), appID: 3, now: now)
                answers.withLock { $0.append(answer?.installations ?? -1) }
                finished.leave()
            }.start()
        }
        finished.wait()
        #expect(answers.withLock { $0 } == Array(repeating: 30, count: 8))
        #expect(reads.withLock { $0 } == 1)

        // Another app is read for itself; the first stays kept.
        #expect(try estimator.estimate(Targeting(), appID: 5, now: now).installations == 50)
        #expect(try estimator.estimate(Targeting(), appID: 3, now: now.addingTimeInterval(59)).installations == 30)
        #expect(reads.withLock { $0 } == 2)
        // A first registration forgets the app's groups; a minute ages them.
        estimator.forget(appID: 3)
        _ = try estimator.estimate(Targeting(), appID: 3, now: now)
        #expect(reads.withLock { $0 } == 3)
        _ = try estimator.estimate(Targeting(), appID: 3, now: now.addingTimeInterval(AudienceEstimator.maxAge))
        #expect(reads.withLock { $0 } == 4)
    }
}
