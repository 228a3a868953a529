import HeraldDomain
import HeraldHTTP

extension HeraldApplication {
    /// Every route and who may reach it: the access model at a glance.
    static func routes(services: Services, staticFiles: StaticFiles) -> [Route] {
        let health = Health(database: services.database)
        let accounts = AccountPages(services: services)
        let settings = SettingsPages(services: services)
        let password = PasswordPages(services: services)
        let campaigns = CampaignPages(services: services)
        let transfer = CampaignTransferPages(services: services)
        let preview = PreviewPages(services: services)
        let users = UserPages(services: services)
        let apps = AppPages(services: services)
        let origins = AppOriginPages(services: services)
        let push = AppPushPages(services: services)
        let demo = DemoPage(services: services)
        let audit = AuditPages(services: services)
        let keyInfo = KeyInfo(services: services)
        let feed = FeedHandler(feeds: services.feeds)
        let campaignAPI = CampaignAPI(services: services)
        let testSends = TestSendPages(services: services)
        let testSendAPI = TestSendAPI(services: services)
        let events = EventIngestor(services: services)
        let eraser = InstallationEraser(services: services)
        let registrar = InstallationRegistrar(services: services)
        let statsAPI = StatsAPI(services: services)
        let audienceAPI = AudienceAPI(services: services)
        let reports = ReportPages(services: services)

        return [
            Route("GET", "/healthz", .anyone, health.alive),
            Route("GET", "/readyz", .anyone, health.ready),
            Route("GET", "/public/*", .anyone, staticFiles.serve),

            // The web delivery client, for any site, and a page to try it on.
            Route("GET", "/sdk/v1/herald.js", .anyone, services.webClient.classicScript),
            Route("GET", "/sdk/v1/herald.mjs", .anyone, services.webClient.moduleScript),
            Route("GET", "/sdk/v1/demo", .anyone, demo.show),

            Route("GET", "/setup", .visitor, accounts.setupForm),
            Route("POST", "/setup", .visitor, accounts.setup),
            Route("GET", "/login", .visitor, accounts.loginForm),
            Route("POST", "/login", .visitor, accounts.login),
            Route("POST", "/logout", .visitor, accounts.logout),
            Route("GET", "/account", .signedIn(.viewer), settings.form),
            Route("POST", "/account", .signedIn(.viewer), settings.save),
            Route("GET", "/account/password", .signedIn(.viewer), password.form),
            Route("POST", "/account/password", .signedIn(.viewer), password.change),

            Route("GET", "/", .signedIn(.viewer)) { _ in .redirect(to: "/campaigns") },

            // Preview (before the campaign routes, so `/campaigns/preview` is not read as a campaign id)
            Route("POST", "/campaigns/preview", .signedIn(.editor), preview.composed),
            Route("POST", "/campaigns/push-bytes", .signedIn(.editor), campaigns.pushBytes),
            Route("POST", "/campaigns/audience", .signedIn(.editor), campaigns.audience),
            Route("GET", "/campaigns/{id}/preview", .signedIn(.viewer), preview.campaign),
            Route("GET", "/campaigns/{id}/preview/frame", .signedIn(.viewer), preview.campaignFrame),
            Route("GET", "/preview/gallery", .signedIn(.viewer), preview.gallery),
            Route("GET", "/preview/gallery/frame", .signedIn(.viewer), preview.galleryFrame),
            Route("GET", "/preview/blank", .signedIn(.viewer), preview.blank),

            Route("GET", "/campaigns", .signedIn(.viewer), campaigns.index),
            Route("GET", "/campaigns/new", .signedIn(.editor), campaigns.new),
            Route("GET", "/campaigns/export", .signedIn(.viewer), transfer.exportList),
            Route("GET", "/campaigns/import", .signedIn(.editor), transfer.importForm),
            Route("POST", "/campaigns/import", .signedIn(.editor), transfer.importFile),
            Route("POST", "/campaigns", .signedIn(.editor), campaigns.create),
            Route("GET", "/campaigns/{id}", .signedIn(.viewer), campaigns.show),
            Route("GET", "/campaigns/{id}/push-progress", .signedIn(.viewer), PushProgressPages(services: services).progress),
            Route("GET", "/campaigns/{id}/edit", .signedIn(.editor), campaigns.edit),
            Route("POST", "/campaigns/{id}", .signedIn(.editor), campaigns.update),
            Route("POST", "/campaigns/{id}/publish", .signedIn(.editor), campaigns.publish),
            Route("POST", "/campaigns/{id}/pause", .signedIn(.editor), campaigns.pause),
            Route("POST", "/campaigns/{id}/resume", .signedIn(.editor), campaigns.resume),
            Route("POST", "/campaigns/{id}/stop", .signedIn(.editor), campaigns.stop),
            Route("POST", "/campaigns/{id}/archive", .signedIn(.editor), campaigns.archive),
            Route("POST", "/campaigns/{id}/duplicate", .signedIn(.editor), campaigns.duplicate),
            Route("POST", "/campaigns/{id}/test-sends", .signedIn(.editor), testSends.send),
            Route("GET", "/campaigns/{id}/delete", .signedIn(.editor), campaigns.confirmDelete),
            Route("POST", "/campaigns/{id}/delete", .signedIn(.editor), campaigns.delete),
            Route("GET", "/campaigns/{id}/history", .signedIn(.viewer), campaigns.history),
            Route("GET", "/campaigns/{id}/export", .signedIn(.viewer), transfer.exportOne),

            // Reports
            Route("GET", "/reports", .signedIn(.viewer), reports.index),
            Route("GET", "/campaigns/{id}/report", .signedIn(.viewer), reports.campaign),
            Route("GET", "/campaigns/{id}/report.csv", .signedIn(.viewer), reports.csv),

            Route("GET", "/users", .signedIn(.admin), users.index),
            Route("GET", "/users/new", .signedIn(.admin), users.new),
            Route("POST", "/users", .signedIn(.admin), users.create),
            Route("GET", "/users/{id}", .signedIn(.admin), users.edit),
            Route("POST", "/users/{id}/role", .signedIn(.admin), users.changeRole),
            Route("POST", "/users/{id}/password", .signedIn(.admin), users.resetPassword),
            Route("POST", "/users/{id}/deactivate", .signedIn(.admin), users.deactivate),
            Route("POST", "/users/{id}/activate", .signedIn(.admin), users.activate),

            Route("GET", "/apps", .signedIn(.admin), apps.index),
            Route("GET", "/apps/new", .signedIn(.admin), apps.new),
            Route("POST", "/apps", .signedIn(.admin), apps.create),
            Route("GET", "/apps/{id}", .signedIn(.admin), apps.show),
            Route("POST", "/apps/{id}/settings", .signedIn(.admin), apps.saveSettings),
            Route("POST", "/apps/{id}/devices", .signedIn(.admin), apps.addDevice),
            Route("POST", "/apps/{id}/devices/{deviceID}/remove", .signedIn(.admin), apps.removeDevice),
            Route("POST", "/apps/{id}/push/apns", .signedIn(.admin), push.setAPNs),
            Route("POST", "/apps/{id}/push/fcm", .signedIn(.admin), push.setFCM),
            Route("POST", "/apps/{id}/push/settings", .signedIn(.admin), push.saveSettings),
            Route("GET", "/apps/{id}/push/{provider}/remove", .signedIn(.admin), push.confirmRemove),
            Route("POST", "/apps/{id}/push/{provider}/remove", .signedIn(.admin), push.remove),
            Route("POST", "/apps/{id}/origins", .signedIn(.admin), origins.add),
            Route("GET", "/apps/{id}/origins/{originID}/remove", .signedIn(.admin), origins.confirmRemove),
            Route("POST", "/apps/{id}/origins/{originID}/remove", .signedIn(.admin), origins.remove),
            Route("POST", "/apps/{id}/keys", .signedIn(.admin), apps.createKey),
            Route("GET", "/apps/{id}/keys/{keyID}/revoke", .signedIn(.admin), apps.confirmRevoke),
            Route("POST", "/apps/{id}/keys/{keyID}/revoke", .signedIn(.admin), apps.revoke),

            Route("GET", "/audit", .signedIn(.admin), audit.index),
            Route("GET", "/system", .signedIn(.admin), SystemPage(services: services).show),

            Route("GET", "/api/v1/key", .apiKey(nil), keyInfo.show),
            Route("GET", "/api/v1/feed", .apiKey(.feedRead), feed.feed).answeringWebOrigins(),
            Route("OPTIONS", "/api/v1/feed", .anyone, services.crossOrigin.preflight(methods: "GET")),
            Route("GET", "/api/v1/campaigns", .apiKey(.campaignsRead), campaignAPI.list),
            Route("POST", "/api/v1/campaigns", .apiKey(.campaignsWrite), campaignAPI.create),
            Route("GET", "/api/v1/campaigns/{id}", .apiKey(.campaignsRead), campaignAPI.show),
            Route("PUT", "/api/v1/campaigns/{id}", .apiKey(.campaignsWrite), campaignAPI.replace),
            Route("DELETE", "/api/v1/campaigns/{id}", .apiKey(.campaignsWrite), campaignAPI.delete),
            Route("POST", "/api/v1/campaigns/{id}/publish", .apiKey(.campaignsWrite), campaignAPI.lifecycle(.publish)),
            Route("POST", "/api/v1/campaigns/{id}/pause", .apiKey(.campaignsWrite), campaignAPI.lifecycle(.pause)),
            Route("POST", "/api/v1/campaigns/{id}/resume", .apiKey(.campaignsWrite), campaignAPI.lifecycle(.resume)),
            Route("POST", "/api/v1/campaigns/{id}/stop", .apiKey(.campaignsWrite), campaignAPI.lifecycle(.stop)),
            Route("POST", "/api/v1/campaigns/{id}/archive", .apiKey(.campaignsWrite), campaignAPI.lifecycle(.archive)),
            Route("GET", "/api/v1/campaigns/{id}/stats", .apiKey(.campaignsRead), statsAPI.stats),
            Route("POST", "/api/v1/campaigns/{id}/test-sends", .apiKey(.campaignsWrite), testSendAPI.create),
            Route("GET", "/api/v1/campaigns/{id}/test-sends/{testSendId}", .apiKey(.campaignsRead), testSendAPI.show),
            Route("POST", "/api/v1/audience", .apiKey(.campaignsRead), audienceAPI.estimate),
            Route("POST", "/api/v1/events", .apiKey(.eventsWrite), events.ingest).answeringWebOrigins().takingKeyFromQuery(),
            Route("OPTIONS", "/api/v1/events", .anyone, services.crossOrigin.preflight(methods: "POST")),
            Route("PUT", "/api/v1/installations/{installationId}", .apiKey(.eventsWrite), registrar.register),
            Route("DELETE", "/api/v1/installations/{installationId}", .apiKey(.installationsDelete), eraser.erase),
        ]
    }
}
