/// Every template the console renders. All of them must load at start, or the boot fails.
enum Template: String, CaseIterable, Sendable {
    case layout
    case error = "errors/error"
    case setup = "accounts/setup"
    case login = "accounts/login"
    case changePassword = "accounts/password"
    case settings = "accounts/settings"
    case campaigns = "campaigns/index"
    case composer = "campaigns/composer"
    case campaign = "campaigns/show"
    /// A push campaign's sending, on its page.
    case campaignPushProgress = "campaigns/push_progress"
    case campaignHistory = "campaigns/history"
    case deleteCampaign = "campaigns/delete"
    /// Publishing a push campaign whose app cannot reach its devices: what is missing, and a button that publishes anyway.
    case confirmPublish = "campaigns/confirm_publish"
    case importCampaigns = "campaigns/import"
    case users = "users/index"
    case newUser = "users/new"
    case editUser = "users/edit"
    case apps = "apps/index"
    case newApp = "apps/new"
    case app = "apps/show"
    case keyCreated = "apps/key_created"
    /// Revoking a key, removing an origin: what will happen, and a button that does it.
    case confirmAppChange = "apps/confirm"
    case audit = "audit/index"
    case system = "system/index"
    case demo = "sdk/demo"
    // Preview: the pages, the framed document, and the partials it draws each layout with.
    case preview = "preview/page"
    /// A push campaign's notification on lock screens.
    case pushPreview = "preview/push"
    /// The composer's framed preview of a notification, and the screens both draw.
    case pushFrame = "preview/push_frame"
    case pushScreens = "preview/push_screens"
    case previewGallery = "preview/gallery"
    case previewFrame = "preview/frame"
    case previewSwitchers = "preview/switchers"
    case previewApp = "preview/app"
    case previewImage = "preview/image"
    case previewText = "preview/text"
    case previewButtons = "preview/buttons"
    case previewClose = "preview/close"
    case previewCard = "preview/card"
    case previewModal = "preview/modal"
    case previewImageOnly = "preview/image_only"
    case previewBanner = "preview/banner"
    case previewSlideup = "preview/slideup"
    case previewFullscreen = "preview/fullscreen"
    // Reports: the two pages and the partials they share.
    case reports = "reports/index"
    case campaignReport = "reports/campaign"
    case reportRange = "reports/range"
    case reportProblem = "reports/problem"
    case reportChart = "reports/chart"
    case reportBreakdown = "reports/breakdown"
}
