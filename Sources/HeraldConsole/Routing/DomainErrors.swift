import HeraldDomain
import HeraldStorage

extension HTTPError {
    /// The one place where an error from below the HTTP layer (domain rules, stores) becomes a status
    /// and a message; nil for errors that are Herald's own fault (a 500). A handler that shows an error
    /// on its own form catches it first; everything else arrives here through the router.
    init?(domain error: any Error) {
        switch error {
        case let error as HTTPError:
            self = error
        case let malformed as MalformedJSON:
            self.init(400, malformed.message, fields: malformed.field.map { [$0] } ?? [])
            phrase = malformed.phrase
        case let unknown as UnknownKeyError:
            self.init(422, Phrase("errors.unknown_field", ["path": .text(unknown.path)]), fields: [unknown.problem])
        case let failure as CampaignLifecycle.Failure:
            switch failure {
            case .invalid(let problems):
                self.init(422, Phrase("errors.cannot_publish"), fields: problems)
            case .notAllowed(let reason): self.init(409, reason)
            case .stale: self.init(409, Phrase("errors.changed_meanwhile"))
            }
        case let failure as CampaignStoreError:
            switch failure {
            case .notFound:
                self = .notFound
            case .staleRevision(_, let current):
                self.init(409, Phrase(
                    "errors.stale_revision", ["revision": .number(current)]))
            case .unreadable(let path, let reason):
                let field = path.isEmpty ? "The campaign" : "`\(path)`"
                self.init(422, "\(field) cannot be stored as sent: \(reason). Nothing was saved.",
                          fields: [FieldProblem(path.isEmpty ? "campaign" : path, reason)])
            }
        default:
            // PostgreSQL's refusal of a NUL arrives as its own error, without a type to match above.
            guard UnstorableText(error) != nil else { return nil }
            self.init(400, Phrase(
                "errors.text_nul"))
        }
    }
}
