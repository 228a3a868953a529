import Foundation
@testable import HeraldConsole
import HeraldDomain

/// `InstallationBody.read`, the reader of `PUT /api/v1/installations/{id}`: any bytes are a registration or a
/// 400/422 that says what is wrong (a 422 naming its fields), never a trap; what it accepts breaks no rule, is
/// already in the form Herald stores, and what Herald would send back of it reads back as the same.
enum InstallationBodyTarget {
    static func run(_ bytes: [UInt8]) {
        let registration: InstallationRegistration
        do {
            registration = try InstallationBody.read(bytes)
        } catch {
            // What the API answers: the router turns the reader's errors into statuses the same way.
            guard let refusal = HTTPError(domain: error) else {
                require(false, "refused with an error the API answers as a 500: \(error)")
                return
            }
            require(refusal.status == 400 || refusal.status == 422, "refused with \(refusal.status): \(refusal.message)")
            require(!refusal.message.isEmpty, "a refusal without words")
            require(refusal.status == 400 || !refusal.fields.isEmpty, "a 422 that names no field: \(refusal.message)")
            return
        }
        require(registration.problems.isEmpty, "accepted with problems: \(registration.problems)")
        require(registration.normalized == registration, "accepted but not normalized: \(registration)")
        if let language = registration.language {
            require(LanguageTag.isValid(language) && LanguageTag.canonical(language) == language, "language \(language) is not canonical")
        }
        if let country = registration.country {
            require(country.utf8.count == 2 && country == country.uppercased(), "country \(country) is not upper case")
        }
        if registration.pushProvider == .apns, let token = registration.pushToken {
            require(token == token.lowercased(), "APNs token \(token) is not lower case")
        }
        require((registration.pushProvider == nil) == (registration.pushToken == nil), "a provider without a token, or the other way")
        do {
            let written = Array(try CampaignJSON.encoder().encode(registration))
            require(try InstallationBody.read(written) == registration, "\(String(decoding: written, as: UTF8.self)) reads back otherwise")
        } catch {
            require(false, "\(registration) does not write and read back: \(error)")
        }
    }
}
