import Foundation
import HeraldDomain
import HeraldHTTP
import HeraldStorage

/// Layout preview: a campaign's message drawn in a device frame, the composer's live preview and the gallery.
///
/// The frame is its own document, embedded by our pages with `<iframe name="preview">`: it carries the
/// message's colors in a `<style nonce>` element (the console's policy forbids inline styles), and no script.
struct PreviewPages: Sendable {
    let services: Services

    struct SwitcherGroup: Sendable {
        let legend: String
        let options: [ChoiceView]
    }

    struct CampaignPage: Sendable {
        let id: Int64
        let name: String
        let heading: String
        let layoutTitle: String
        let frameSrc: String
        let orientation: String
        let switchers: [SwitcherGroup]
    }

    struct GalleryItem: Sendable {
        let layout: String
        let title: String
        let origin: String
        let summary: String
        let frameSrc: String
    }

    struct GalleryPage: Sendable {
        let items: [GalleryItem]
        let orientation: String
        let switchers: [SwitcherGroup]
    }

    // MARK: A saved campaign

    /// `GET /campaigns/{id}/preview`: the frame with device, orientation, theme and language switchers.
    func campaign(_ context: RequestContext) throws -> Response {
        let stored = try self.stored(id: context.id("id"))
        let localizer = context.localizer
        if stored.campaign.channel == .push {
            let appName = try services.database.apps.find(id: stored.campaign.app)?.name ?? ""
            let model = PushPreview(stored: stored, appName: appName, requestedLanguage: context.request.query["language"], localizer: localizer)
            return try services.page(.pushPreview, title: model.heading, model: model, context: context)
        }
        let frame = PreviewFrame(context.request.query)
        let message = stored.campaign.message
        let language = Self.versionTag(message, context.request.query["language"])
        var query = frame.query
        if let language { query += "&" + FormData([("language", language)]).urlencoded }
        let languages = SwitcherGroup(
            legend: localizer("preview.language"),
            options: [ChoiceView(name: "language", value: "", label: localizer("preview.default_version"), checked: language == nil)]
                + (message.translations ?? [:]).keys.sorted().map { tag in
                    ChoiceView(name: "language", value: tag, label: LanguageNames.name(of: tag, in: localizer), checked: tag == language)
                })
        let heading = localizer("preview.page_title", ["name": Localizer.isolated(stored.campaign.name)])
        let model = CampaignPage(
            id: stored.id, name: stored.campaign.name, heading: heading, layoutTitle: localizer(ComposerFields.layout.optionKey(message.layout.rawValue)),
            frameSrc: "/campaigns/\(stored.id)/preview/frame?\(query)", orientation: frame.orientation.rawValue,
            switchers: Self.switchers(frame, localizer) + (message.translations?.isEmpty ?? true ? [] : [languages]))
        return try services.page(.preview, title: heading, model: model, context: context)
    }

    /// `GET /campaigns/{id}/preview/frame`: the framed document for the saved message (`language=fa`: its Persian version).
    func campaignFrame(_ context: RequestContext) throws -> Response {
        let campaign = try stored(id: context.id("id")).campaign
        if campaign.channel == .push {
            return try pushFrame(campaign, language: context.request.query["language"], theme: PreviewFrame(context.request.query).theme,
                                 problems: campaign.problems(for: .publish), context)
        }
        let (message, language) = Self.version(campaign.message, context.request.query["language"])
        let problems = Self.versionProblems(campaign.problems(for: .publish), language: language, context.localizer)
        return frameResponse { nonce in
            MessagePreview.document(message, frame: PreviewFrame(context.request.query), problems: problems, nonce: nonce,
                                    localizer: context.localizer, language: language)
        }
    }

    // MARK: The composer

    /// `POST /campaigns/preview`: the composer's fields, unsaved, drawn in the frame `preview.device` etc. name.
    func composed(_ context: RequestContext) throws -> Response {
        let form = context.form
        let localizer = context.localizer
        var (campaign, readProblems) = CampaignForm.decode(form, app: form["app"].flatMap(Int64.init) ?? 0)
        let read = Set(readProblems.map(\.path))
        if campaign.channel == .push {
            // Measured with the saved campaign's id, as saving will.
            campaign.id = form[ComposerView.campaignIDName].flatMap(Int64.init)
            return try pushFrame(campaign, language: form[ComposerVersions.currentName], theme: PreviewFrame(form, prefix: "preview.").theme,
                                 problems: readProblems + campaign.problems(for: .publish).filter { !read.contains($0.path) }, context)
        }
        let (message, language) = Self.version(campaign.message, form[ComposerVersions.currentName])
        let problems = Self.versionProblems(
            readProblems + campaign.problems(for: .publish).filter { !read.contains($0.path) }, language: language, localizer)
        return frameResponse { nonce in
            MessagePreview.document(message, frame: PreviewFrame(form, prefix: "preview."), problems: problems, nonce: nonce,
                                    localizer: localizer, language: language)
        }
    }

    /// `GET /preview/blank`: the composer's frame before its first preview (without script, until "Preview" is pressed).
    func blank(_ context: RequestContext) throws -> Response {
        frameResponse { nonce in
            MessagePreview.empty(frame: PreviewFrame(context.request.query), nonce: nonce, localizer: context.localizer,
                                 text: context.localizer("preview.press_preview"))
        }
    }

    // MARK: Gallery

    /// `GET /preview/gallery`: every layout with sample content, side by side.
    func gallery(_ context: RequestContext) throws -> Response {
        let query = context.request.query
        let localizer = context.localizer
        let frame = PreviewFrame(query)
        let language = query["lang"].flatMap(PreviewSamples.Language.init(rawValue:)) ?? .en
        let items = Message.Layout.allCases.map { layout in
            GalleryItem(
                layout: layout.rawValue, title: localizer(ComposerFields.layout.optionKey(layout.rawValue)), origin: PreviewSamples.origin(layout),
                summary: localizer("fields.layout.summaries.\(layout.rawValue)"),
                frameSrc: "/preview/gallery/frame?layout=\(layout.rawValue)&\(frame.query)&lang=\(language.rawValue)")
        }
        let languages = SwitcherGroup(legend: localizer("preview.sample_text"), options: PreviewSamples.Language.allCases.map {
            ChoiceView(name: "lang", value: $0.rawValue, label: $0.title, checked: $0 == language)
        })
        let model = GalleryPage(items: items, orientation: frame.orientation.rawValue, switchers: Self.switchers(frame, localizer) + [languages])
        return try services.page(.previewGallery, title: localizer("preview.gallery_title"), model: model, context: context)
    }

    /// `GET /preview/gallery/frame?layout=…`: one sample message in a frame (`lang=fa` for Persian, `edge=top` for a slide-up from the top).
    func galleryFrame(_ context: RequestContext) throws -> Response {
        let query = context.request.query
        guard let layout = query["layout"].flatMap(Message.Layout.init(rawValue:)) else {
            throw HTTPError(404, context.localizer("preview.errors.no_layout"))
        }
        let sample = query["lang"].flatMap(PreviewSamples.Language.init(rawValue:)) ?? .en
        let message = PreviewSamples.message(layout, language: sample, edge: query["edge"].flatMap(Message.SlideEdge.init(rawValue:)) ?? .bottom)
        return frameResponse { nonce in
            MessagePreview.document(message, frame: PreviewFrame(query), problems: [], nonce: nonce, localizer: context.localizer,
                                    language: sample.rawValue, showsImage: { PreviewSamples.images.contains($0) || ImageURL.problem($0) == nil })
        }
    }

    // MARK: Helpers

    private func pushFrame(
        _ campaign: Campaign, language: String?, theme: PreviewFrame.Theme, problems: [FieldProblem], _ context: RequestContext
    ) throws -> Response {
        let appName = try services.database.apps.find(id: campaign.app)?.name ?? ""
        let document = PushFrameDocument(campaign, appName: appName, requestedLanguage: language, theme: theme, problems: problems,
                                         localizer: context.localizer)
        var response = Response.html(services.views.render(.pushFrame, document))
        SecurityHeaders.allowFraming(&response, styleNonce: Secret.random(bytes: 16))
        return response
    }

    /// The framed document, with a fresh nonce for its generated styles on every answer.
    private func frameResponse(_ document: (String) -> PreviewDocument) -> Response {
        let nonce = Secret.random(bytes: 16)
        var response = Response.html(services.views.render(.previewFrame, document(nonce)))
        SecurityHeaders.allowFraming(&response, styleNonce: nonce)
        return response
    }

    private func stored(id: Int64) throws -> StoredCampaign {
        guard let stored = try services.database.campaigns.find(id: id) else { throw HTTPError.notFound }
        return stored
    }

    /// The tag of the language version `requested` names, as the message spells it, or nil for the default
    /// version (nothing requested, or no version for it).
    static func versionTag(_ message: Message, _ requested: String?) -> String? {
        guard let requested, !requested.isEmpty, requested.utf8.count <= 40 else { return nil }
        return message.version(for: requested).tag
    }

    /// The message as devices whose language is `requested` get it, and the version's tag (nil: the default).
    static func version(_ message: Message, _ requested: String?) -> (Message, String?) {
        guard let tag = versionTag(message, requested), let translation = message.translations?[tag] else {
            return (message.applying(MessageTranslation()), nil)
        }
        return (message.applying(translation), tag)
    }

    /// The problems a device would drop this version of the message or notification for (the default
    /// version's and, for a language version, its own), each with its field as the composer names it.
    static func versionProblems(
        _ problems: [FieldProblem], channel: Channel = .inApp, language: String? = nil, _ localizer: Localizer
    ) -> [PreviewProblem] {
        let own = language.map { "\(channel.translations).\($0)" }
        return problems.filter { problem in
            guard problem.path.hasPrefix(channel.contentPath + ".") else { return false }
            guard let version = ComposerFields.version(of: problem.path) else { return problem.path != channel.translations }
            return "\(channel.translations).\(version.tag)" == own
        }.map {
            let whole = localizer(channel == .push ? "preview.push.notification" : "preview.message")
            return PreviewProblem(field: ComposerFields.label(for: $0.path, localizer) ?? whole, message: ComposerProblems.text($0, localizer))
        }
    }

    static func switchers(_ frame: PreviewFrame, _ localizer: Localizer) -> [SwitcherGroup] {
        [
            SwitcherGroup(legend: localizer("preview.device"), options: PreviewFrame.Device.allCases.map {
                ChoiceView(name: "device", value: $0.rawValue, label: localizer("preview.devices.\($0.rawValue)"), checked: $0 == frame.device)
            }),
            SwitcherGroup(legend: localizer("preview.orientation"), options: PreviewFrame.Orientation.allCases.map {
                ChoiceView(name: "orientation", value: $0.rawValue, label: localizer("preview.orientations.\($0.rawValue)"), checked: $0 == frame.orientation)
            }),
            SwitcherGroup(legend: localizer("preview.theme"), options: PreviewFrame.Theme.allCases.map {
                ChoiceView(name: "theme", value: $0.rawValue, label: localizer("preview.themes.\($0.rawValue)"), checked: $0 == frame.theme)
            }),
        ]
    }
}
