import Foundation
import Testing

@Suite("Package")
struct PackageTests {
    struct Manifest: Decodable {
        struct Product: Decodable {
            let name: String
            let targets: [String]
            let type: [String: AnyCodable?]
        }

        struct Target: Decodable {
            let name: String
            let dependencies: [AnyCodable]
        }

        let products: [Product]
        let targets: [Target]
    }

    /// Any JSON, kept as text, to read SwiftPM's dependency descriptions without modelling them.
    struct AnyCodable: Decodable {
        let text: String
        init(from decoder: Decoder) throws {
            let value = try decoder.singleValueContainer()
            if let string = try? value.decode(String.self) { text = string }
            else if let array = try? value.decode([AnyCodable?].self) { text = array.map { $0?.text ?? "null" }.joined(separator: ",") }
            else if let object = try? value.decode([String: AnyCodable?].self) {
                text = object.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value?.text ?? "null")" }.joined(separator: ",")
            } else { text = "" }
        }
    }

    @Test("HeraldDelivery is a library product that depends only on the domain model, which depends on nothing")
    func deliveryHasNoServerDependencies() throws {
        // Its own scratch path: the .build lock belongs to the `swift test` running this test.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("herald-dump-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let data = try runTool(["swift", "package", "--scratch-path", scratch.path, "dump-package"]).output
        let manifest = try JSONDecoder().decode(Manifest.self, from: data)

        let product = try #require(manifest.products.first { $0.name == "HeraldDelivery" })
        #expect(product.type.keys.contains("library"))
        #expect(product.targets == ["HeraldDelivery"])
        let delivery = try #require(manifest.targets.first { $0.name == "HeraldDelivery" })
        #expect(delivery.dependencies.count == 1)
        #expect(delivery.dependencies.first?.text.contains("HeraldDomain") == true)
        let domain = try #require(manifest.targets.first { $0.name == "HeraldDomain" })
        #expect(domain.dependencies.isEmpty)
    }
}
