import Foundation
import HeraldDomain
import HeraldHTTP

/// Makes the composer's inputs from the fields' descriptions (`ComposerFields`), the form's values and the
/// problems to show beside them, with labels and hints from the string catalog.
struct ComposerInputs {
    let form: FormData
    let problems: [FieldProblem]
    let localizer: Localizer
    let layout: Message.Layout
    /// A notification's payload sizes by version (empty for in-app campaigns).
    let pushBytes: [PushBytesView]

    init(form: FormData, problems: [FieldProblem], localizer: Localizer, pushBytes: [PushBytesView] = []) {
        self.form = form
        self.problems = problems
        self.localizer = localizer
        self.pushBytes = pushBytes
        layout = Message.Layout(rawValue: form[ComposerFields.layout.path] ?? "") ?? .card
    }

    /// The payload count of the notification version `tag` ("" for the default); a version still to be
    /// added (the script's template) starts as the default's, which it is until something is typed.
    func pushBytes(tag: String) -> PushBytesView? {
        guard let view = pushBytes.first(where: { $0.tag == tag }) ?? pushBytes.first else { return nil }
        return PushBytesView(tag: tag, text: view.text, over: view.over)
    }

    func error(_ path: String) -> String? {
        problems.first { $0.path == path }.map { ComposerProblems.text($0, localizer) }
    }

    func errorUnder(_ path: String) -> String? {
        problems.first { $0.path == path || $0.path.hasPrefix(path + ".") }.map { ComposerProblems.text($0, localizer) }
    }

    func isHidden(_ field: ComposerField) -> Bool {
        !field.layouts.contains(layout)
    }

    /// The input for `field`, named `name` (a row's or a language version's path; the field's own by default).
    func field(
        _ field: ComposerField, name: String? = nil, datalist: String? = nil, value: String? = nil, errorUnder: Bool = false,
        chooses choice: CampaignForm.Choice? = nil, version: (tag: String, direction: String)? = nil
    ) -> FieldView {
        let path = name ?? field.path
        let current = value ?? form[path] ?? ""
        let swatch = field.kind == .color ? Swatch(current.trimmingCharacters(in: .whitespaces)) : nil
        let id = FieldView.id(for: path)
        let hint = field.hintKey.map { localizer($0) }
        let problem = errorUnder ? self.errorUnder(path) : error(path)
        let described = [hint.map { _ in "\(id)-hint" }, problem.map { _ in "\(id)-error" }].compactMap { $0 }
        let type = switch field.kind {
        case .url: "url"
        case .number: "number"
        case .datetime: "datetime-local"
        default: "text"
        }
        // A version's empty field shows the default version's value it falls back to, isolated so that it
        // reads in its own direction inside a right-to-left input (and the other way round).
        let fallback = version == nil ? nil : (form[field.path] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let isText = field.kind == .text || field.kind == .multiline
        return FieldView(
            id: id, name: path, label: field.label(localizer, layout: layout),
            cardLabel: field.hasCardLabel ? field.label(localizer, layout: .card) : nil,
            otherLabel: field.hasCardLabel ? field.label(localizer) : nil, type: type, value: current, autocomplete: nil,
            hint: version == nil ? hint : nil, multiline: field.kind == .multiline, required: false, error: problem, placeholder: fallback.flatMap { $0.isEmpty ? nil : Localizer.isolated($0) } ?? field.placeholder, datalist: datalist,
            inputMode: field.kind == .number ? "numeric" : nil, isColor: field.kind == .color,
            swatchFill: swatch?.fill, swatchOpacity: swatch?.opacity ?? "1",
            usedByLayouts: field.layoutNames, hidden: isHidden(field),
            describedBy: version == nil ? (described.isEmpty ? nil : described.joined(separator: " ")) : problem.map { _ in "\(id)-error" },
            chooses: choice.map { ChoiceView(name: $0.name, value: $0.usingValue, label: "", checked: false).id },
            inputLang: isText ? version?.tag : nil, inputDir: isText ? version?.direction ?? "auto" : (version == nil ? "auto" : "ltr"),
            fallsBackTo: version == nil ? nil : FieldView.id(for: field.path),
            overrides: version != nil && !current.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
    }

    func select(_ field: ComposerField, _ options: [(String, String)], default defaultValue: String, name: String? = nil, value: String? = nil) -> ComposerSelect {
        let path = name ?? field.path
        let current = value ?? form[path] ?? defaultValue
        return ComposerSelect(
            id: FieldView.id(for: path), name: path, label: field.label(localizer),
            options: options.map { SelectOption(value: $0.0, label: $0.1, selected: $0.0 == current) }, error: error(path),
            usedByLayouts: field.layoutNames, hidden: isHidden(field))
    }

    func filterRow(prefix: String, index: Int, row: FormData) -> FilterRow {
        let path = "\(prefix).\(index)"
        func options(_ field: ComposerField) -> [(String, String)] { field.options.map { ($0, localizer(field.optionKey($0))) } }
        return FilterRow(
            prefix: prefix, index: index,
            property: field(ComposerFields.filterProperty, name: "\(path).property", value: row["property"] ?? ""),
            op: select(ComposerFields.filterOperator, options(ComposerFields.filterOperator), default: "eq", name: "\(path).op", value: row["op"] ?? "eq"),
            type: select(ComposerFields.filterType, options(ComposerFields.filterType), default: "string", name: "\(path).type", value: row["type"] ?? "string"),
            value: field(ComposerFields.filterValue, name: "\(path).value", value: row["value"] ?? ""))
    }

    func dataRow(index: Int, row: FormData, canMoveUp: Bool) -> DataRow {
        DataRow(index: index, prefix: "data.\(index)",
                key: field(ComposerFields.dataKey, name: "data.\(index).key", value: row["key"] ?? ""),
                value: field(ComposerFields.dataValue, name: "data.\(index).value", value: row["value"] ?? ""),
                canMoveUp: canMoveUp)
    }

    func triggerRow(index: Int, row: FormData) -> TriggerRow {
        let path = "triggers.\(index)"
        let number = localizer.number(index + 1)
        return TriggerRow(
            index: index, number: number, legend: localizer("composer.triggers.legend", ["number": number]), prefix: path,
            event: field(ComposerFields.triggerEvent, name: "\(path).event", datalist: "herald-events", value: row["event"] ?? ""),
            filters: FormRows.rows(row, "filters").enumerated().map { filterRow(prefix: "\(path).filters", index: $0, row: $1) },
            filtersPrefix: "\(path).filters", canMoveUp: index > 0)
    }
}

/// How the composer words a problem: beside its field, the message; in the summary, the field's label
/// first ("Title: Enter a title.", "Persian (fa) — Title: …"), linking to the field.
enum ComposerProblems {
    /// The one place a problem's message becomes composer text: the rule's sentence from the catalog's
    /// `validation` section, in the reader's language.
    static func text(_ problem: FieldProblem, _ localizer: Localizer) -> String {
        localizer.message(for: problem)
    }

    static func summaryItem(_ problem: FieldProblem, _ localizer: Localizer) -> ErrorSummaryItem {
        let message = text(problem, localizer)
        let field = ComposerView.fieldName(for: problem.path)
        guard let label = ComposerFields.label(for: field, localizer) else {
            return ErrorSummaryItem(fieldID: FieldView.id(for: field), message: message)
        }
        return ErrorSummaryItem(
            fieldID: FieldView.id(for: field), message: localizer("composer.errors.summary_item", ["field": label, "message": message]))
    }
}
