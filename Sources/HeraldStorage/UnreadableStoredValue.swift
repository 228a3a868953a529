import Foundation

/// A stored value this version cannot read (a role written by something else): the row is refused, not guessed.
public struct UnreadableStoredValue: Error, CustomStringConvertible {
    public let column: String
    public let value: String

    package init(column: String, value: String) {
        self.column = column
        self.value = value
    }

    public var description: String { "store: the stored \(column) \"\(value)\" is not one this version knows" }
}
