import HeraldHTTP

/// Repeated groups of fields (`data.0.key`, `data.0.value`, `data.1.key`…) as rows, in index order.
enum FormRows {
    /// The rows under `prefix`, each with the prefix and index removed from its names.
    static func rows(_ form: FormData, _ prefix: String) -> [FormData] {
        var rows: [Int: FormData] = [:]
        let start = prefix + "."
        for (name, value) in form.pairs where name.hasPrefix(start) {
            let rest = name.dropFirst(start.count)
            guard let dot = rest.firstIndex(of: "."), let index = Int(rest[..<dot]) else { continue }
            rows[index, default: FormData()].pairs.append((String(rest[rest.index(after: dot)...]), value))
        }
        return rows.keys.sorted().map { rows[$0]! }
    }

    /// `form` with the rows under `prefix` replaced by `rows`, numbered from 0.
    static func replacing(_ form: FormData, _ prefix: String, with rows: [FormData]) -> FormData {
        var result = FormData(form.pairs.filter { !$0.name.hasPrefix(prefix + ".") }.map { ($0.name, $0.value) })
        for (index, row) in rows.enumerated() {
            for (name, value) in row.pairs { result.pairs.append(("\(prefix).\(index).\(name)", value)) }
        }
        return result
    }

    /// Applies a row button pressed without JavaScript: `add:data`, `remove:triggers.1`, `up:data.2`.
    /// Returns nil when `intent` is not a row operation.
    static func apply(_ intent: String, to form: FormData) -> FormData? {
        let parts = intent.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, ["add", "remove", "up"].contains(parts[0]) else { return nil }
        if parts[0] == "add" {
            var rows = rows(form, parts[1])
            rows.append(FormData([("new", "")]))
            return replacing(form, parts[1], with: rows)
        }
        guard let dot = parts[1].lastIndex(of: "."), let index = Int(parts[1][parts[1].index(after: dot)...]) else { return nil }
        let prefix = String(parts[1][..<dot])
        var rows = rows(form, prefix)
        guard rows.indices.contains(index) else { return form }
        if parts[0] == "remove" {
            rows.remove(at: index)
        } else if index > 0 {
            rows.swapAt(index, index - 1)
        }
        return replacing(form, prefix, with: rows)
    }
}
