import Foundation
@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

extension TestApp {
    /// Signs in a new admin, viewer@example.com, on a browser of its own: for the console pages of what a fixture made.
    static func signedIn(_ app: TestApp) async throws -> TestBrowser {
        try app.createUser(email: "viewer@example.com", role: .admin)
        let browser = app.browser()
        let answer = try browser.submit("/login", from: "/login", ["email": "viewer@example.com", "password": "correct horse battery"])
        #expect(answer.status == 303)
        return browser
    }
}
