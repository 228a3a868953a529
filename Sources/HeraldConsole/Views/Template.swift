/// Every template the console renders. All of them must load at start, or the boot fails.
enum Template: String, CaseIterable, Sendable {
    case layout
    case error = "errors/error"
    case setup = "accounts/setup"
    case login = "accounts/login"
    case campaigns = "campaigns/index"
    case composer = "campaigns/composer"
    case campaign = "campaigns/show"
    case campaignHistory = "campaigns/history"
    case deleteCampaign = "campaigns/delete"
    case importCampaigns = "campaigns/import"
    case users = "users/index"
    case newUser = "users/new"
    case editUser = "users/edit"
    case apps = "apps/index"
    case newApp = "apps/new"
    case app = "apps/show"
    case keyCreated = "apps/key_created"
    case revokeKey = "apps/revoke_key"
    case audit = "audit/index"
    // Reports: the two pages and the partials they share.
    case reports = "reports/index"
    case campaignReport = "reports/campaign"
    case reportRange = "reports/range"
    case reportProblem = "reports/problem"
    case reportChart = "reports/chart"
    case reportBreakdown = "reports/breakdown"
}
