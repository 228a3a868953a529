/// Runs of combining marks in text from outside, bounded as Unicode's Stream-Safe Text Format bounds them
/// (UAX #15: at most 30 non-starters in a row). Swift normalizes text to compare or hash it, and sorts each
/// run of combining marks as it does, in time that grows with the square of the run: one form field of a
/// letter and 300,000 marks (600 KB) took 33 s of a core to hash or to compare with `csrf_token`, before any
/// length limit could see it. No script writes more than a handful of marks on one letter.
public enum CombiningMarks {
    /// The most non-starters in a row that text from outside may hold.
    public static let longestRun = 30

    /// Whether `text` holds more than `longestRun` non-starters in a row.
    /// A `String`, not `some StringProtocol`: called across modules for every text an event batch or a form
    /// holds, a generic version walked the bytes through protocol witnesses (2–3 % of ingestion's CPU).
    public static func exceedRun(in text: String) -> Bool {
        // Every scalar below U+0300 starts a run afresh: plain ASCII and Latin-1 text cost one pass over bytes.
        guard text.utf8.contains(where: { $0 >= 0xCC }) else { return false }
        var run = Run()
        return text.unicodeScalars.contains { run.add($0) }
    }

    /// Counts non-starters in a row, scalar by scalar, for readers that decode text themselves.
    public struct Run: Sendable {
        private var length = 0

        public init() {}

        /// Adds `scalar`; true once the run is longer than `longestRun`.
        public mutating func add(_ scalar: Unicode.Scalar) -> Bool {
            let nonStarters = CombiningMarks.nonStarters(scalar)
            length = nonStarters == 0 ? 0 : length + nonStarters
            return length > CombiningMarks.longestRun
        }

        /// A scalar of plain text between runs (ASCII, an escape's character): the run ends.
        public mutating func reset() {
            length = 0
        }
    }

    /// How many non-starters `scalar` adds to a run: 1 for a combining mark, 2 for the three Tibetan vowel
    /// signs whose canonical decomposition is two marks though they are starters themselves, else 0.
    static func nonStarters(_ scalar: Unicode.Scalar) -> Int {
        guard scalar.value >= 0x300 else { return 0 }
        switch scalar.value {
        case 0x0F73, 0x0F75, 0x0F81: return 2
        default: return scalar.properties.canonicalCombiningClass == .notReordered ? 0 : 1
        }
    }
}
