/// CLDR plural categories, and the rules of the console's languages for whole numbers
/// (https://www.unicode.org/cldr/charts/latest/supplemental/language_plural_rules.html).
enum PluralCategory: String, CaseIterable, Sendable {
    case zero, one, two, few, many, other

    static func of(_ count: Int, in language: ConsoleLanguage) -> PluralCategory {
        switch language {
        case .en, .de, .pseudo:
            return count == 1 ? .one : .other
        case .fa:
            // Persian: i = 0 or n = 1 is "one".
            return count == 0 || count == 1 ? .one : .other
        case .ja:
            return .other
        case .ar:
            let hundreds = count.magnitude % 100
            switch count {
            case 0: return .zero
            case 1: return .one
            case 2: return .two
            default:
                if (3...10).contains(hundreds) { return .few }
                if (11...99).contains(hundreds) { return .many }
                return .other
            }
        }
    }

    /// The categories a language's catalog must give for every plural string.
    static func required(in language: ConsoleLanguage) -> Set<PluralCategory> {
        switch language {
        case .en, .de, .pseudo, .fa: [.one, .other]
        case .ja: [.other]
        case .ar: [.zero, .one, .two, .few, .many, .other]
        }
    }
}
