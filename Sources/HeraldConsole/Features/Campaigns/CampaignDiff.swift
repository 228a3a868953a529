import Foundation
import HeraldDomain
import HeraldStorage

/// What changed between two versions of a campaign, field by field: by JSON path, and by the composer's
/// label for the field where it has one (`ComposerFields`).
enum CampaignDiff {
    static func changes(from old: CampaignRevision?, to new: CampaignRevision, _ localizer: Localizer) -> [ChangeRow] {
        var rows: [ChangeRow] = []
        if let old, old.state != new.state {
            rows.append(ChangeRow(
                path: "state", fieldLabel: localizer("composer.history.state"), before: localizer.title(old.state), after: localizer.title(new.state)))
        }
        let before = old.map { flatten($0.campaign) } ?? [:]
        let after = flatten(new.campaign)
        for path in Set(before.keys).union(after.keys).sorted(by: pathOrder) where before[path] != after[path] {
            rows.append(ChangeRow(
                path: path, fieldLabel: ComposerFields.label(for: path, localizer),
                before: before[path].map { shown($0, at: path, localizer) } ?? "—", after: after[path].map { shown($0, at: path, localizer) } ?? "—"))
        }
        return rows
    }

    /// A value as the composer offers it: an option's label for a field of options (`once` → "Once per
    /// device", `ios` → "iOS"), anything else as stored.
    private static func shown(_ value: String, at path: String, _ localizer: Localizer) -> String {
        guard let field = ComposerFields.field(for: ComposerFields.version(of: path)?.path ?? path),
              [.select, .choice, .checkbox].contains(field.kind) else { return value }
        if field.path == ComposerFields.platforms.path { return localizer.platformTitle(value) }
        guard localizer.has(field.optionKey(value)) else { return value }
        return localizer(field.optionKey(value))
    }

    /// Every leaf of the campaign's JSON as `path → value text`.
    static func flatten(_ campaign: Campaign) -> [String: String] {
        guard let data = try? CampaignJSON.encoder().encode(campaign.content), let root = try? JSONDecoder().decode(JSONLeaf.self, from: data) else { return [:] }
        var leaves: [String: String] = [:]
        func walk(_ node: JSONLeaf, _ path: String) {
            switch node {
            case .object(let members): for (key, child) in members { walk(child, path.isEmpty ? key : "\(path).\(key)") }
            case .array(let items): for (index, child) in items.enumerated() { walk(child, "\(path).\(index)") }
            case .value(let text): leaves[path] = text
            case .null: break
            }
        }
        walk(root, "")
        return leaves
    }

    /// Paths in a readable order: by segment, numbers numerically.
    private static func pathOrder(_ a: String, _ b: String) -> Bool {
        let left = a.split(separator: "."), right = b.split(separator: ".")
        for (x, y) in zip(left, right) where x != y {
            if let i = Int(x), let j = Int(y) { return i < j }
            return x < y
        }
        return left.count < right.count
    }
}

/// A parsed JSON value with scalars kept as their text, enough to compare documents leaf by leaf.
private indirect enum JSONLeaf: Decodable {
    case object([String: JSONLeaf])
    case array([JSONLeaf])
    case value(String)
    case null

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .value(flag ? "true" : "false")
        } else if let integer = try? container.decode(Int64.self) {
            self = .value(String(integer))
        } else if let number = try? container.decode(Double.self) {
            self = .value(String(number))
        } else if let text = try? container.decode(String.self) {
            self = .value(text)
        } else if let items = try? container.decode([JSONLeaf].self) {
            self = .array(items)
        } else {
            self = .object(try container.decode([String: JSONLeaf].self))
        }
    }
}
