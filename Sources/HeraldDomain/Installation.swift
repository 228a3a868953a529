/// Installation ids as delivery clients make them and Herald takes them, on events, feed requests,
/// registrations and erasures alike.
public enum InstallationID {
    /// The most Unicode scalars an installation id may have.
    public static let maxLength = 200

    /// 1 to `maxLength` characters, on one line, without control characters.
    public static func isValid(_ id: String) -> Bool {
        !id.isEmpty && id.scalarCount <= maxLength && ControlCharacters.first(in: id, multiline: false) == nil
    }

    /// What `isValid` asks, for the person who sent something else.
    public static let rule = "1 to \(maxLength) characters without control characters"
}

/// What a delivery client tells Herald about its installation: the body of
/// `PUT /api/v1/installations/{installationId}`. Herald stores it as `normalized` when `problems` is empty.
public struct InstallationRegistration: Sendable, Equatable, Codable {
    public var platform: Platform
    /// Goes with `pushToken`: both or neither.
    public var pushProvider: PushProvider?
    /// The token the provider gave the app; absent when the app has none (yet).
    public var pushToken: String?
    public var appVersion: String?
    /// A BCP 47 tag (`LanguageTag`), such as `fa` or `pt-BR`.
    public var language: String?
    /// An ISO 3166 alpha-2 code, such as `IR`.
    public var country: String?
    /// An IANA time zone name, such as `Asia/Tehran`.
    public var timeZone: String?
    /// Whether the user lets the app show notifications.
    public var notificationsAllowed: Bool

    /// An APNs device token in hex: 32 bytes (64 digits) today; Apple says tokens may grow, so up to 100
    /// bytes are taken. Bounding tokens to what providers issue bounds what a fake registration can store.
    public static let apnsTokenHexDigits = 64...200
    /// The longest FCM registration token: FCM issues about 150 to 300 characters; four times that is room
    /// to grow without storing kilobytes per fake installation.
    public static let maxFCMTokenLength = 1024
    /// The longest app version, in UTF-8 bytes.
    public static let maxAppVersionBytes = 64

    public init(
        platform: Platform, pushProvider: PushProvider? = nil, pushToken: String? = nil, appVersion: String? = nil, language: String? = nil,
        country: String? = nil, timeZone: String? = nil, notificationsAllowed: Bool
    ) {
        self.platform = platform
        self.pushProvider = pushProvider
        self.pushToken = pushToken
        self.appVersion = appVersion
        self.language = language
        self.country = country
        self.timeZone = timeZone
        self.notificationsAllowed = notificationsAllowed
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case platform, pushProvider, pushToken, appVersion, language, country, timeZone, notificationsAllowed
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(knownKeys: CodingKeys.self)
        platform = try container.decode(Platform.self, forKey: .platform)
        pushProvider = try container.decodeIfPresent(PushProvider.self, forKey: .pushProvider)
        pushToken = try container.decodeIfPresent(String.self, forKey: .pushToken)
        appVersion = try container.decodeIfPresent(String.self, forKey: .appVersion)
        language = try container.decodeIfPresent(String.self, forKey: .language)
        country = try container.decodeIfPresent(String.self, forKey: .country)
        timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone)
        notificationsAllowed = try container.decode(Bool.self, forKey: .notificationsAllowed)
    }

    /// Every rule the registration breaks, by its JSON field; empty when Herald stores it.
    public var problems: [FieldProblem] {
        var problems: [FieldProblem] = []
        switch (pushProvider, pushToken) {
        case (nil, nil):
            break
        case (nil, _?):
            problems.append(FieldProblem("pushProvider", "A push token needs its `pushProvider`: apns or fcm."))
        case (_?, nil):
            problems.append(FieldProblem("pushToken", "`pushProvider` goes with a `pushToken`; leave both out when the app has no token."))
        case (let provider?, let token?):
            if let problem = Self.tokenProblem(token, provider: provider) { problems.append(FieldProblem("pushToken", problem)) }
            if let problem = Self.providerProblem(provider, platform: platform) { problems.append(FieldProblem("pushProvider", problem)) }
        }
        if let appVersion, appVersion.isEmpty || appVersion.utf8.count > Self.maxAppVersionBytes
            || ControlCharacters.first(in: appVersion, multiline: false) != nil {
            problems.append(FieldProblem(
                "appVersion", "`appVersion` must be 1 to \(Self.maxAppVersionBytes) bytes of UTF-8 on one line, without control characters, or absent."))
        }
        if let language, !LanguageTag.isValid(language) {
            problems.append(FieldProblem(
                "language", "`language` must be a language tag such as fa, de or pt-BR (at most \(LanguageTag.maxLength) characters), or absent."))
        }
        if let country, !Self.isCountryCode(country) {
            problems.append(FieldProblem("country", "`country` must be a two-letter ISO 3166 code such as US or IR, or absent."))
        }
        if let timeZone, TimeZoneName.zone(timeZone) == nil {
            problems.append(FieldProblem("timeZone", "`timeZone` must be an IANA time zone name such as Asia/Tehran or Europe/Berlin, or absent."))
        }
        return problems
    }

    /// The registration as Herald stores it: the language tag in canonical case, the country in upper
    /// case, an APNs token in lower case (APNs reads its hex either way), so one device is one value.
    public var normalized: InstallationRegistration {
        var normalized = self
        normalized.language = language.map(LanguageTag.canonical)
        normalized.country = country?.uppercased()
        if pushProvider == .apns { normalized.pushToken = pushToken?.lowercased() }
        return normalized
    }

    /// Why `token` cannot be a token of `provider`, or nil when it can: an APNs token is an even number of
    /// hex digits within `apnsTokenHexDigits`; an FCM token is 1 to `maxFCMTokenLength` characters of the
    /// alphabet FCM issues, letters, digits, `_`, `:` and `-`.
    public static func tokenProblem(_ token: String, provider: PushProvider) -> String? {
        let bytes = token.utf8
        switch provider {
        case .apns:
            guard apnsTokenHexDigits.contains(bytes.count), bytes.count.isMultiple(of: 2), bytes.allSatisfy(isHexDigit) else {
                return "An APNs `pushToken` is the device token's bytes in hex: an even number, \(apnsTokenHexDigits.lowerBound) to "
                    + "\(apnsTokenHexDigits.upperBound), of the digits 0-9 and a-f."
            }
        case .fcm:
            guard (1...maxFCMTokenLength).contains(bytes.count), bytes.allSatisfy(isFCMTokenCharacter) else {
                return "An FCM `pushToken` is 1 to \(maxFCMTokenLength) of the characters A-Z, a-z, 0-9, _, : and -."
            }
        }
        return nil
    }

    /// Why a device of `platform` cannot be reached through `provider`, or nil when it can: APNs delivers to
    /// Apple devices only (FCM reaches all three, iOS through the `apns` override Herald sends it).
    public static func providerProblem(_ provider: PushProvider, platform: Platform) -> String? {
        guard provider == .apns, platform != .ios else { return nil }
        return "APNs delivers to iOS devices only: a \(platform.rawValue) installation registers an FCM token (`pushProvider` fcm), or none."
    }

    /// Two ASCII letters, in either case.
    public static func isCountryCode(_ text: String) -> Bool {
        text.utf8.count == 2 && text.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0 | 0x20) }
    }

    /// A letter, digit, `_`, `:` or `-`: the characters of an FCM registration token.
    private static func isFCMTokenCharacter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }
}
