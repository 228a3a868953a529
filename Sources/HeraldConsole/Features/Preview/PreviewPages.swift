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

    /// `GET /campaigns/{id}/preview`: the frame with device, orientation and theme switchers.
    func campaign(_ context: RequestContext) throws -> Response {
        let stored = try self.stored(id: context.id("id"))
        let frame = PreviewFrame(context.request.query)
        let model = CampaignPage(
            id: stored.id, name: stored.campaign.name, layoutTitle: stored.campaign.message.layout.title,
            frameSrc: "/campaigns/\(stored.id)/preview/frame?\(frame.query)", orientation: frame.orientation.rawValue,
            switchers: Self.switchers(frame))
        return try services.page(.preview, title: "Preview of \(stored.campaign.name)", model: model, context: context)
    }

    /// `GET /campaigns/{id}/preview/frame`: the framed document for the saved message.
    func campaignFrame(_ context: RequestContext) throws -> Response {
        let campaign = try stored(id: context.id("id")).campaign
        let problems = Self.messageProblems(campaign.problems(for: .publish))
        return frameResponse { nonce in
            MessagePreview.document(campaign.message, frame: PreviewFrame(context.request.query), problems: problems, nonce: nonce)
        }
    }

    // MARK: The composer

    /// `POST /campaigns/preview`: the composer's fields, unsaved, drawn in the frame `preview.device` etc. name.
    func composed(_ context: RequestContext) throws -> Response {
        let form = context.form
        let (campaign, readProblems) = CampaignForm.decode(form, app: form["app"].flatMap(Int64.init) ?? 0)
        let read = Set(readProblems.map(\.path))
        let problems = Self.messageProblems(readProblems + campaign.problems(for: .publish).filter { !read.contains($0.path) })
        return frameResponse { nonce in
            MessagePreview.document(campaign.message, frame: PreviewFrame(form, prefix: "preview."), problems: problems, nonce: nonce)
        }
    }

    /// `GET /preview/blank`: the composer's frame before its first preview (without script, until "Preview" is pressed).
    func blank(_ context: RequestContext) throws -> Response {
        frameResponse { nonce in
            MessagePreview.empty(frame: PreviewFrame(context.request.query), nonce: nonce,
                                 text: "Press “Preview” to see the message as you compose it.")
        }
    }

    // MARK: Gallery

    /// `GET /preview/gallery`: every layout with sample content, side by side.
    func gallery(_ context: RequestContext) throws -> Response {
        let query = context.request.query
        let frame = PreviewFrame(query)
        let language = query["lang"].flatMap(PreviewSamples.Language.init(rawValue:)) ?? .en
        let items = Message.Layout.allCases.map { layout in
            GalleryItem(
                layout: layout.rawValue, title: layout.title, origin: PreviewSamples.origin(layout), summary: layout.summary,
                frameSrc: "/preview/gallery/frame?layout=\(layout.rawValue)&\(frame.query)&lang=\(language.rawValue)")
        }
        let languages = SwitcherGroup(legend: "Sample text", options: PreviewSamples.Language.allCases.map {
            ChoiceView(name: "lang", value: $0.rawValue, label: $0.title, checked: $0 == language)
        })
        let model = GalleryPage(items: items, orientation: frame.orientation.rawValue, switchers: Self.switchers(frame) + [languages])
        return try services.page(.previewGallery, title: "Layout gallery", model: model, context: context)
    }

    /// `GET /preview/gallery/frame?layout=…`: one sample message in a frame (`lang=fa` for Persian, `edge=top` for a slide-up from the top).
    func galleryFrame(_ context: RequestContext) throws -> Response {
        let query = context.request.query
        guard let layout = query["layout"].flatMap(Message.Layout.init(rawValue:)) else {
            throw HTTPError(404, "There is no layout by that name; choose one of card, modal, image_only, banner, slideup or fullscreen.")
        }
        let message = PreviewSamples.message(
            layout, language: query["lang"].flatMap(PreviewSamples.Language.init(rawValue:)) ?? .en,
            edge: query["edge"].flatMap(Message.SlideEdge.init(rawValue:)) ?? .bottom)
        return frameResponse { nonce in
            MessagePreview.document(message, frame: PreviewFrame(query), problems: [], nonce: nonce,
                                    showsImage: { PreviewSamples.images.contains($0) || ImageURL.problem($0) == nil })
        }
    }

    // MARK: Helpers

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

    /// The problems that concern the message (what a device checks), each with its field as the composer names it.
    static func messageProblems(_ problems: [FieldProblem]) -> [PreviewProblem] {
        problems.filter { $0.path.hasPrefix("message.") }.map { PreviewProblem(field: fieldLabel($0.path), message: $0.message) }
    }

    static func fieldLabel(_ path: String) -> String {
        let labels = [
            "message.layout": "Layout",
            "message.title.text": "Title", "message.title.color": "Title color",
            "message.body.text": "Body text", "message.body.color": "Body color",
            "message.imageUrl": "Image URL", "message.landscapeImageUrl": "Landscape image URL",
            "message.backgroundColor": "Background color",
            "message.primaryAction.text": "Primary button text", "message.primaryAction.url": "Primary button action",
            "message.primaryAction.textColor": "Primary button text color", "message.primaryAction.buttonColor": "Primary button color",
            "message.secondaryAction.text": "Secondary button text", "message.secondaryAction.url": "Secondary button action",
            "message.secondaryAction.textColor": "Secondary button text color",
            "message.secondaryAction.buttonColor": "Secondary button color",
            "message.action.url": "Tap action", "message.dismiss.seconds": "Hide after (seconds)",
            "message.slideFrom": "Slides in from", "message.orientation": "Orientation",
        ]
        return labels[path] ?? "Message"
    }

    static func switchers(_ frame: PreviewFrame) -> [SwitcherGroup] {
        [
            SwitcherGroup(legend: "Device", options: PreviewFrame.Device.allCases.map {
                ChoiceView(name: "device", value: $0.rawValue, label: $0.title, checked: $0 == frame.device)
            }),
            SwitcherGroup(legend: "Orientation", options: PreviewFrame.Orientation.allCases.map {
                ChoiceView(name: "orientation", value: $0.rawValue, label: $0.title, checked: $0 == frame.orientation)
            }),
            SwitcherGroup(legend: "System theme", options: PreviewFrame.Theme.allCases.map {
                ChoiceView(name: "theme", value: $0.rawValue, label: $0.title, checked: $0 == frame.theme)
            }),
        ]
    }
}
