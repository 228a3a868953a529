import HeraldDomain

extension ReportPages {
    /// The funnel's stages as the report shows them, each with its count and what it is of the stage before:
    /// chosen (shown + discarded), shown, clicked, converted; then the devices shown and the devices that
    /// converted, whose ratio is the conversion rate (an estimate reads "≈", as unique devices do).
    static func funnel(_ stats: CampaignStats, _ localizer: Localizer) -> [Metric] {
        let funnel = stats.funnel
        func note(_ key: String, _ part: Int, of whole: Int) -> String {
            localizer("reports.funnel." + key, ["percent": ReportFormat.percent(part, of: whole, localizer)])
        }
        func devices(_ count: Int) -> String {
            funnel.devicesEstimated ? localizer("reports.metric.estimated_value", ["value": localizer.number(count)]) : localizer.number(count)
        }
        return [
            Metric(label: localizer("reports.funnel.chosen"), value: localizer.number(funnel.chosen), note: localizer("reports.funnel.chosen_note")),
            Metric(label: localizer("reports.funnel.shown"), value: localizer.number(funnel.shown), note: note("shown_note", funnel.shown, of: funnel.chosen)),
            Metric(label: localizer("reports.funnel.clicked"), value: localizer.number(funnel.clicked), note: note("clicked_note", funnel.clicked, of: funnel.shown)),
            Metric(label: localizer("reports.funnel.converted"), value: localizer.number(funnel.converted),
                   note: note("converted_note", funnel.converted, of: funnel.shown)),
            Metric(label: localizer("reports.funnel.shown_devices"), value: devices(funnel.shownDevices),
                   note: localizer(funnel.devicesEstimated ? "reports.metric.estimated_note" : "reports.funnel.shown_devices_note")),
            Metric(label: localizer("reports.funnel.converted_devices"), value: devices(funnel.convertedDevices),
                   note: note("converted_devices_note", funnel.convertedDevices, of: funnel.shownDevices)),
        ]
    }

    /// The discards breakdown: every reason, each shown even at zero, labelled in the reader's words.
    static func discardsBreakdown(_ stats: CampaignStats, _ localizer: Localizer) -> Breakdown {
        breakdown(
            "discards", item: "reason", stats.discardsByReason,
            known: DiscardReason.allCases.map { ($0.rawValue, localizer("reports.breakdown." + $0.rawValue)) }, empty: "", localizer)
    }

    /// The CSV's funnel and discards sections: the stages labelled in the reader's words, then each reason's
    /// count under its code (as the stats API names it), every reason even at zero.
    static func funnelCSV(_ stats: CampaignStats, _ localizer: Localizer) -> [String] {
        let funnel = stats.funnel
        func header(_ first: String) -> String { [first, "count"].map { csvField(localizer("reports.csv." + $0)) }.joined(separator: ",") }
        var lines = ["", header("stage")]
        let stages = [
            ("chosen", funnel.chosen), ("shown", funnel.shown), ("clicked", funnel.clicked), ("converted", funnel.converted),
            ("shown_devices", funnel.shownDevices), ("converted_devices", funnel.convertedDevices),
        ]
        lines += stages.map { stage, count in
            "\(csvField(localizer("reports.funnel." + stage))),\(count)"
        }
        lines += ["", header("discard_reason")]
        lines += DiscardReason.allCases.map { "\($0.rawValue),\(stats.discardsByReason[$0.rawValue] ?? 0)" }
        return lines
    }
}
