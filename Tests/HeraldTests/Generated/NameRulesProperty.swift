import Foundation
import HeraldDomain
import HeraldStorage
import TestSupport
import Testing
@testable import HeraldConsole

/// Names typed into forms and on the command line (an app's, a key's, a test device's, a person's) are
/// one line of text: a control character anywhere in one is refused on its field, and nothing is stored.
@Suite("Generated inputs: names of apps, keys, test devices and people")
struct NameRulesProperty {
    @Test func aControlCharacterInANameIsRefusedWhereverTheNameIsTyped() throws {
        let engine = try EngineDatabase(.sqlite)
        let database = try #require(engine.stores as? any HeraldDatabase)
        let registry = AppRegistry(database: database)
        let shop = try registry.createApp(name: "Shop", platforms: [Platform.ios], actor: .commandLine, now: Date())
        var run = GeneratedRun("control characters in names", cases: 400)
        run.run(Generated.cases { draw -> String in
            var scalars = Array(GeneratedText.valid(&draw, maxCharacters: 60).unicodeScalars)
            for _ in 0..<draw.int(0...2) {
                let control = draw.chance(0.5) ? draw.scalar(0x00...0x1F) : draw.scalar(0x7F...0x9F)
                scalars.insert(control, at: draw.int(0...scalars.count))
            }
            var name = ""
            name.unicodeScalars.append(contentsOf: scalars)
            return name
        }) { name, run in
            // The forms trim spaces and tabs around a name first, as the operations do.
            let refused = ControlCharacters.first(in: name.trimmingCharacters(in: .whitespaces), multiline: false) != nil
            func refusal(_ field: String, _ attempt: () throws -> Void) -> Bool {
                do {
                    try attempt()
                    return false
                } catch let errors as InputProblems {
                    return errors.items.contains { $0.field == field && $0.message.hasPrefix("Remove the control character U+") }
                } catch {
                    return false
                }
            }
            let before = (try? database.apps.all().count) ?? -1
            let outcomes = [
                ("app name", refusal("name") { _ = try registry.createApp(name: name, platforms: [Platform.ios], actor: .commandLine, now: Date()) }),
                ("key name", refusal("name") { _ = try registry.createKey(appID: shop.id, name: name, scopes: [.feedRead], actor: .commandLine, now: Date()) }),
                ("device name", refusal("deviceName") {
                    _ = try registry.addTestDevice(appID: shop.id, installationID: UUID().uuidString, name: name, actor: .commandLine, now: Date())
                }),
                ("person's name", refusal("name") {
                    let errors = Accounts.problems(email: "someone@example.com", name: name, password: "a long enough password")
                    if !errors.isEmpty { throw errors }
                }),
            ]
            for (what, wasRefused) in outcomes {
                run.expect(wasRefused == refused, "the \(what) was \(wasRefused ? "" : "not ")refused for a control character", input: name.unicodeScalars.map { String($0.value, radix: 16) })
            }
            if refused {
                run.expect((try? database.apps.all().count) == before, "a refused app was stored", input: name)
            }
            run.note(refused ? "refused" : "accepted")
        }
    }
}
