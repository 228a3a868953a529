import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// `PUT /api/v1/installations/{installationId}`: a delivery client registers its installation (platform,
/// push token, app version, language, country, time zone, notification permission), or says what
/// changed. The whole registration is replaced; 201 when the installation is new, 200 when it was known.
/// Each key and each client address may register only so many a minute (`RegistrationLimits`); past
/// that a 429 with `Retry-After` names the limit, and nothing is read or saved.
struct InstallationRegistrar: Sendable {
    let services: Services

    func register(_ context: RequestContext, key: APIKey) throws -> Response {
        let address = context.request.clientAddress(trustedProxies: services.configuration.trustedProxies)
        if let refusal = services.registrationLimits.admit(keyID: key.id, address: address?.throttleSubject ?? "unknown", now: context.now) {
            throw HTTPError(
                429, "This \(refusal.subject.rawValue) has reached its limit of \(refusal.limit) installation registrations in "
                    + "\(Int(services.configuration.registrationLimits.window)) seconds; try again in \(refusal.retryAfter) seconds. Nothing was saved.",
                retryAfterSeconds: refusal.retryAfter)
        }
        let id = try Self.addressedID(context)
        try context.request.requireJSON("the installation")
        let registration = try InstallationBody.read(context.request.body)
        // A device of a platform the app does not ship on is another app's, or a mistake: nothing would reach it.
        if let app = try services.database.apps.find(id: key.appID), !app.platforms.contains(registration.platform) {
            let shipped = app.platforms.map(\.rawValue).joined(separator: ", ")
            throw HTTPError(422, "`platform` \(registration.platform.rawValue) is not one of this key's app's platforms (\(shipped)); nothing was saved.",
                            fields: [FieldProblem("platform", "Use one of the app's platforms: \(shipped).")])
        }
        let (installation, created) = try services.database.installations.upsert(
            appID: key.appID, installationID: id, registration: registration, now: context.now)
        // A new installation counts at once in this instance's estimates (a changed one within their minute).
        if created { services.audience.forget(appID: key.appID) }
        return .json(Array(try CampaignJSON.encoder().encode(installation)), status: created ? 201 : 200)
    }

    /// The installation id in the address, or a 422 naming it. Registrations and erasures take the same
    /// ids: one that no registration or event could hold has nothing to erase (and PostgreSQL could not
    /// even look up one holding NUL).
    static func addressedID(_ context: RequestContext) throws -> String {
        guard let id = context.parameters["installationId"] else { throw HTTPError.notFound }
        guard InstallationID.isValid(id) else {
            throw HTTPError(422, "The installation id in the address must be \(InstallationID.rule); nothing was changed.",
                            fields: [FieldProblem("installationId", "Use \(InstallationID.rule).")])
        }
        return id
    }
}

/// The body of a registration, read strictly: the parser the fuzz target `installation-body` runs.
enum InstallationBody {
    /// The registration in `body`, checked and as Herald stores it (`InstallationRegistration.normalized`).
    /// Not JSON, or a field of the wrong type: `MalformedJSON` (a 400) naming where. A key the registration does not define,
    /// or a rule broken: a 422 naming each field. Nothing is saved either way.
    static func read(_ body: [UInt8]) throws -> InstallationRegistration {
        let registration: InstallationRegistration
        do {
            registration = try JSONBody.decode(InstallationRegistration.self, from: body)
        } catch let unknown as UnknownKeyError {
            throw HTTPError(422, "`\(unknown.path)` is not a field of an installation; nothing was saved.", fields: [unknown.problem])
        }
        let problems = registration.problems
        guard problems.isEmpty else { throw HTTPError.invalid(problems) }
        return registration.normalized
    }
}
