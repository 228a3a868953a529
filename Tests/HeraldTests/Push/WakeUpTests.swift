@testable import HeraldConsole
import Testing

/// The push loop's sleep between turns. Each sleep here is an hour long, so a sleep that a signal or a
/// cancellation failed to end would hang the test instead of passing.
@Suite("A sleep that a signal ends")
struct WakeUpTests {
    @Test("A signal ends the sleep under way, and one given while nobody sleeps ends the next sleep at once, only once")
    func signals() async {
        let wakeUp = WakeUp()
        wakeUp.signal()
        await wakeUp.sleep(upTo: .seconds(3600))

        // Many signals while nobody sleeps are one: the sleep after the next ends on its own timer.
        wakeUp.signal()
        wakeUp.signal()
        await wakeUp.sleep(upTo: .seconds(3600))
        await wakeUp.sleep(upTo: .milliseconds(1))

        for _ in 0..<200 {
            async let slept: Void = wakeUp.sleep(upTo: .seconds(3600))
            // Given before or after the sleep starts: either way the sleep ends.
            await Task.yield()
            wakeUp.signal()
            await slept
            // A signal that found no sleeper (it came first) is taken by a short sleep, leaving none behind.
            await wakeUp.sleep(upTo: .milliseconds(1))
        }
    }

    @Test("Cancelling the sleeping task ends its sleep, before or while it sleeps")
    func cancellation() async {
        let wakeUp = WakeUp()
        for round in 0..<100 {
            let sleeper = Task { await wakeUp.sleep(upTo: .seconds(3600)) }
            if round.isMultiple(of: 2) { await Task.yield() }
            sleeper.cancel()
            await sleeper.value
        }
    }
}
