@testable import HeraldConsole
import HeraldDomain
import HeraldHTTP
import HeraldStorage
import Testing

/// The one reader of a campaign list's address, shared by the list page, its export and the API.
@Suite("Campaign list addresses")
struct CampaignListAddressTests {
    static func read(_ query: String, pageSize: Int? = nil, maxPageSize: Int? = nil) -> (query: CampaignQuery, problems: [CampaignQuery.ParameterProblem]) {
        CampaignQuery.read(Request(method: "GET", target: "/campaigns?" + query).query, pageSize: pageSize, maxPageSize: maxPageSize)
    }

    @Test("Every filter is read from the address")
    func filters() {
        let (query, problems) = Self.read("app=7&status=paused&q=spring+sale&sort=priority&page=3&pageSize=40", pageSize: 50, maxPageSize: 200)
        #expect(problems.isEmpty)
        #expect(query.appID == 7 && query.status == .paused && query.search == "spring sale" && query.sort == .priority)
        #expect(query.page == 3 && query.pageSize == 40)
    }

    @Test("What cannot be read keeps its default and is named, in order")
    func problems() {
        let (query, problems) = Self.read("status=live&page=0&pageSize=x&app=seven&sort=newest", pageSize: 50, maxPageSize: 200)
        #expect(problems == [.unknownStatus("live"), .unknownSort("newest"), .notPositive(parameter: "page"), .notPositive(parameter: "pageSize")])
        #expect(query.appID == nil && query.status == nil && query.sort == .updated && query.page == 1 && query.pageSize == 50)
    }

    @Test("The page size is the caller's unless it lets the address choose, up to its maximum")
    func pageSize() {
        #expect(Self.read("pageSize=10", pageSize: 25).query.pageSize == 25)
        #expect(Self.read("pageSize=1000", pageSize: 50, maxPageSize: 200).query.pageSize == 200)
        #expect(Self.read("").query.pageSize == CampaignQuery().pageSize)
    }
}
