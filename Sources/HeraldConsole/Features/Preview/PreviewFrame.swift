import HeraldHTTP

/// The device a preview is drawn on: phone or tablet, held portrait or landscape, light or dark system theme.
struct PreviewFrame: Sendable, Equatable {
    enum Device: String, CaseIterable, Sendable {
        case phone, tablet
    }

    enum Orientation: String, CaseIterable, Sendable {
        case portrait, landscape
    }

    enum Theme: String, CaseIterable, Sendable {
        case light, dark
    }

    var device: Device = .phone
    var orientation: Orientation = .portrait
    var theme: Theme = .light

    init(device: Device = .phone, orientation: Orientation = .portrait, theme: Theme = .light) {
        self.device = device
        self.orientation = orientation
        self.theme = theme
    }

    /// Reads `device`, `orientation` and `theme` (each under `prefix`); unknown or missing values keep the defaults.
    init(_ fields: FormData, prefix: String = "") {
        device = fields[prefix + "device"].flatMap(Device.init(rawValue:)) ?? .phone
        orientation = fields[prefix + "orientation"].flatMap(Orientation.init(rawValue:)) ?? .portrait
        theme = fields[prefix + "theme"].flatMap(Theme.init(rawValue:)) ?? .light
    }

    /// The screen in points, as the device reports it held this way up (an iPhone 14 and an iPad Air).
    var screen: (width: Int, height: Int) {
        let (short, long) = device == .phone ? (390, 844) : (820, 1180)
        return orientation == .portrait ? (short, long) : (long, short)
    }

    func caption(_ localizer: Localizer) -> String {
        localizer("preview.caption", [
            "device": localizer("preview.devices.\(device.rawValue)"), "orientation": localizer("preview.orientations.\(orientation.rawValue)"),
            "theme": localizer("preview.themes.\(theme.rawValue)"),
        ])
    }

    /// This frame as a query string (`device=phone&orientation=portrait&theme=light`).
    var query: String {
        FormData([("device", device.rawValue), ("orientation", orientation.rawValue), ("theme", theme.rawValue)]).urlencoded
    }
}
