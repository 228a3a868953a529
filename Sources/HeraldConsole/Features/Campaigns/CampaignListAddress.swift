import HeraldDomain
import HeraldHTTP
import HeraldStorage

extension CampaignQuery {
    /// A parameter of a campaign list's address that says nothing the list understands.
    enum ParameterProblem: Error, Equatable {
        case unknownStatus(String)
        case unknownSort(String)
        case notPositive(parameter: String)
    }

    /// The one reader of a campaign list's address (`app`, `status`, `q`, `sort`, `page`, `pageSize`), for
    /// the list page, its export and `GET /api/v1/campaigns`. A page holds `pageSize` (the store's default
    /// when nil); with a `maxPageSize`, the `pageSize` parameter may choose up to that instead. What cannot
    /// be read keeps its default and is named in `problems`, in the order above, for the API to refuse; the
    /// pages, whose own links make these addresses, show the unfiltered default instead.
    static func read(_ parameters: FormData, pageSize: Int? = nil, maxPageSize: Int? = nil) -> (query: CampaignQuery, problems: [ParameterProblem]) {
        var query = CampaignQuery()
        var problems: [ParameterProblem] = []
        func positive(_ name: String) -> Int? {
            guard let text = parameters[name] else { return nil }
            guard let value = Int(text), value > 0 else {
                problems.append(.notPositive(parameter: name))
                return nil
            }
            return value
        }
        query.appID = parameters["app"].flatMap(Int64.init)
        if let status = parameters["status"] {
            query.status = CampaignStatus(rawValue: status)
            if query.status == nil { problems.append(.unknownStatus(status)) }
        }
        query.search = parameters["q"] ?? ""
        if let sort = parameters["sort"] {
            query.sort = Sort(rawValue: sort) ?? .updated
            if Sort(rawValue: sort) == nil { problems.append(.unknownSort(sort)) }
        }
        query.page = positive("page") ?? 1
        if let pageSize { query.pageSize = pageSize }
        if let maxPageSize { query.pageSize = min(positive("pageSize") ?? query.pageSize, maxPageSize) }
        return (query, problems)
    }
}
