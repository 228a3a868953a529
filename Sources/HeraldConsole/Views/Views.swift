import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Mustache

/// Renders pages: the page's template with its model, then the layout around it.
struct Views: Sendable {
    private let library: MustacheLibrary

    /// Loads `folder` and checks that every `Template` is there; a missing or broken one fails the boot.
    init(folder: URL) async throws {
        do {
            library = try await MustacheLibrary(directory: folder.path)
        } catch let error as MustacheLibrary.ParserError {
            throw ViewsError.broken(
                file: error.filename, line: error.context.lineNumber, column: error.context.columnNumber,
                reason: "\(error.error)")
        }
        let missing = Template.allCases.filter { library.getTemplate(named: $0.rawValue) == nil }
        guard missing.isEmpty else {
            throw ViewsError.missing(missing.map { "\($0.rawValue).mustache" }, folder: folder.path)
        }
    }

    func render(_ template: Template, _ object: Any) -> String {
        // Every template was checked at start, so a nil here cannot happen.
        library.render(object, withTemplate: template.rawValue) ?? ""
    }
}

enum ViewsError: Error, CustomStringConvertible {
    case missing([String], folder: String)
    case broken(file: String, line: Int, column: Int, reason: String)

    var description: String {
        switch self {
        case .missing(let names, let folder):
            "templates: missing in \(folder): \(names.joined(separator: ", "))"
        case .broken(let file, let line, let column, let reason):
            "templates: \(file):\(line):\(column) does not parse: \(reason)"
        }
    }
}

/// What a page template sees: its model as `page`, and the CSRF token as `csrf` for its forms.
struct PageView: Sendable {
    let page: any Sendable
    let csrf: String
}

/// What the layout sees.
struct LayoutView {
    struct Navigation {
        let href: String
        let label: String
        let current: Bool
    }

    struct SignedInUser {
        let email: String
        let name: String
        let role: String
    }

    struct Flash {
        let kind: String
        let message: String
        /// `alert` for errors, so screen readers announce them at once; `status` otherwise.
        let ariaRole: String
    }

    let title: String
    let body: String
    let user: SignedInUser?
    let navigation: [Navigation]
    let flash: Flash?
    let csrf: String
}

/// A short message shown once on the next page (after a redirect).
enum FlashKind: String {
    case success, error, info
}
