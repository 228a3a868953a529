extension Campaign {
    /// A push campaign's own rules: its notification, each language version as devices will get it, the
    /// payload against each provider's limit, and custom data keys that do not collide with the payload's.
    func pushProblems(for mode: ValidationMode) -> [FieldProblem] {
        var problems: [FieldProblem] = []
        if message != Campaign.noMessage { problems.append(FieldProblem(path: "message", key: "message_on_push")) }
        guard let push else { return problems + [FieldProblem(path: "push", key: "push_required")] }
        if !triggers.isEmpty { problems.append(FieldProblem(path: "triggers", key: "push_triggers")) }
        problems += push.problems(for: mode)
        if push.inDeviceTimeZone && schedule.start == nil {
            problems.append(FieldProblem(path: "schedule.start", key: "push_device_time_needs_start"))
        }
        for (index, pair) in data.pairs.enumerated() where PushPayload.isReserved(pair.key) {
            problems.append(FieldProblem(path: "data.\(index).key", key: "push_data_key_reserved", arguments: ["key": .text(pair.key)]))
        }
        // The server chooses a push campaign's devices from their registrations, which carry neither.
        if targeting.userProperties?.isEmpty == false {
            problems.append(FieldProblem(path: "targeting.userProperties", key: "push_targeting_device_only"))
        }
        if targeting.daysSinceFirstOpen != nil {
            problems.append(FieldProblem(path: "targeting.daysSinceFirstOpen", key: "push_targeting_device_only"))
        }
        problems += payloadProblems()
        return problems
    }

    /// Each version's payload measured as it will be sent: with the campaign's id once it has one (the
    /// widest id before, so a draft is never measured smaller than it will be sent).
    public func payloadSizes() -> [(tag: String?, provider: PushProvider, bytes: Int)] {
        guard let push else { return [] }
        let campaignID = id ?? PushPayload.widestCampaignID
        return push.versions.flatMap { tag, version in
            PushProvider.allCases.map { (tag, $0, PushPayload.size(version, campaignID: campaignID, data: data, provider: $0)) }
        }
    }

    private func payloadProblems() -> [FieldProblem] {
        payloadSizes().compactMap { tag, provider, bytes in
            guard bytes > provider.payloadLimit else { return nil }
            return FieldProblem(
                path: tag.map { "push.translations.\($0).body" } ?? "push.body", key: "push_payload_too_large",
                arguments: ["provider": .text(provider.title), "bytes": .number(bytes), "limit": .number(provider.payloadLimit)])
        }
    }
}

extension PushPayload {
    /// Whether a custom data key would overwrite a key Herald or a provider writes.
    public static func isReserved(_ key: String) -> Bool {
        let lowered = key.lowercased()
        return providerReservedKeys.contains(lowered) || lowered.hasPrefix(reservedKeyPrefix)
            || providerReservedPrefixes.contains { lowered.hasPrefix($0) }
    }
}

extension PushNotification {
    func problems(for mode: ValidationMode) -> [FieldProblem] {
        var problems = versionProblems(at: "push", for: mode)
        if let badge, !CampaignLimits.badge.contains(badge) {
            problems.append(FieldProblem(path: "push.badge", key: "push_badge_range", arguments: ["limit": .number(CampaignLimits.badge.upperBound)]))
        }
        for (path, value) in [("push.sound", sound), ("push.category", category), ("push.threadId", threadId)] {
            if let value, value.scalarCount > CampaignLimits.pushNameLength {
                problems.append(FieldProblem(path: path, key: "push_name_too_long", arguments: ["limit": .number(CampaignLimits.pushNameLength)]))
            }
        }
        if silent, [title, subtitle, body, imageUrl, sound].contains(where: { !($0 ?? "").isEmpty }) || badge != nil {
            problems.append(FieldProblem(path: "push.silent", key: "push_silent_shows_nothing"))
        }
        for (tag, translation) in LanguageTag.checkedVersions(translations ?? [:], at: "push.translations", problems: &problems) {
            let path = "push.translations.\(tag)"
            // A problem of the default's own parts is reported there, not again for each version.
            problems += applying(translation).versionProblems(at: path, for: mode).filter { problem in
                problem.path.split(separator: ".").last.map { translation.sets(String($0)) } ?? true
            }
        }
        return problems
    }

    /// The rules one version (default or translated) must meet, at `path`.
    func versionProblems(at path: String, for mode: ValidationMode) -> [FieldProblem] {
        var problems: [FieldProblem] = []
        func blank(_ value: String?) -> Bool { (value ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        if mode == .publish && !silent && blank(title) && blank(body) {
            problems.append(FieldProblem(path: "\(path).body", key: "push_text_required"))
        }
        for (field, value, limit) in [("title", title, CampaignLimits.titleLength), ("subtitle", subtitle, CampaignLimits.pushSubtitleLength),
                                      ("body", body, CampaignLimits.bodyLength)] {
            if let value, value.scalarCount > limit {
                problems.append(FieldProblem(path: "\(path).\(field)", key: "text_too_long", arguments: ["limit": .number(limit)]))
            }
        }
        if let imageUrl, !imageUrl.isEmpty {
            if imageUrl.scalarCount > CampaignLimits.urlLength {
                problems.append(FieldProblem(path: "\(path).imageUrl", key: "url_too_long", arguments: ["limit": .number(CampaignLimits.urlLength)]))
            } else if let problem = ImageURL.problemText(imageUrl) {
                problems.append(FieldProblem("\(path).imageUrl", problem))
            }
        }
        if let url, !url.isEmpty {
            if url.scalarCount > CampaignLimits.urlLength {
                problems.append(FieldProblem(path: "\(path).url", key: "url_too_long", arguments: ["limit": .number(CampaignLimits.urlLength)]))
            } else if let problem = ActionURL.problemText(url) {
                problems.append(FieldProblem("\(path).url", problem))
            }
        }
        return problems
    }

    /// Every text with its path and whether it may span lines, for the control-character rule.
    var texts: [(path: String, text: String, multiline: Bool)] {
        var texts: [(String, String, Bool)] = [
            ("push.title", title ?? "", true), ("push.subtitle", subtitle ?? "", false), ("push.body", body ?? "", true),
            ("push.imageUrl", imageUrl ?? "", false), ("push.url", url ?? "", false), ("push.sound", sound ?? "", false),
            ("push.category", category ?? "", false), ("push.threadId", threadId ?? "", false),
        ]
        for (tag, version) in (translations ?? [:]).sorted(by: { $0.key < $1.key }) {
            let path = "push.translations.\(tag)"
            texts += [("\(path).title", version.title ?? "", true), ("\(path).subtitle", version.subtitle ?? "", false),
                      ("\(path).body", version.body ?? "", true), ("\(path).imageUrl", version.imageUrl ?? "", false),
                      ("\(path).url", version.url ?? "", false)]
        }
        return texts
    }
}

extension PushTranslation {
    /// Whether this version sets `field` (a `PushNotification` field name).
    public func sets(_ field: String) -> Bool {
        switch field {
        case "title": title != nil
        case "subtitle": subtitle != nil
        case "body": body != nil
        case "imageUrl": imageUrl != nil
        case "url": url != nil
        default: false
        }
    }
}
