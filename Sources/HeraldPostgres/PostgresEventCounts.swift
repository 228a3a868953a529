import Foundation
import HeraldStorage
import HeraldDomain
import NIOCore
import PostgresNIO

/// A report's counts read by one statement that answers one row: the rollups, the chunk counts, the rows
/// the unique devices (and for one campaign the funnel's devices) are made from, and (for one campaign) the
/// top conversions and languages.
///
/// postgres-nio sends a connection's next statement only when the previous one has answered, so each
/// statement costs a round trip, and it decodes every answered row through its state machine. Reading
/// the parts as statements of their own made a report about eight round trips and a few thousand rows;
/// here each part is one value of the one row (a column's rows as an array, blobs end to end with
/// their lengths), which the client decodes at a fraction of the cost.
enum PostgresEventCounts {
    /// The statement for one campaign (`$1`) or all, over days `first` to `last`, with the rows of unique
    /// devices when `devices`: bitmap chunks when a range holds at least one and at most `exact` (the exact
    /// limit), sketches when it holds more and the range is one campaign's (its whole weeks' and the days'
    /// around them, `DeviceSketches.Split`; across every campaign they are read apart, row by row, as they
    /// may be many). Four texts in all, each prepared once per connection; the values are bound.
    static func statement(campaignID: Int64?, from: String, to: String, devices: Bool, exactChunkLimit: Int) -> (sql: String, binds: [PostgresData]) {
        var binds = [PostgresData(string: from), PostgresData(string: to)]
        if let campaignID { binds.insert(PostgresData(int64: campaignID), at: 0) }
        if devices {
            binds.append(PostgresData(int64: Int64(exactChunkLimit)))
            let split = DeviceSketches.split(from: from, to: to)
            binds += [split.beforeTo, split.firstWeek, split.lastWeek, split.afterFrom].map { PostgresData(string: $0) }
        }
        return (statement(campaign: campaignID != nil, devices: devices), binds)
    }

    /// The device ranges the statement reads ahead, each under the name its columns begin with: every
    /// event's devices (`DeviceKind.seen`) of real traffic and of test devices, and for one campaign the
    /// funnel's devices shown and converted (real traffic).
    private static func deviceRanges(campaign: Bool) -> [(name: String, test: Bool, kind: DeviceKind)] {
        [("real", false, .seen), ("test", true, .seen)] + (campaign ? [("exposed", false, .exposed), ("converted", false, .converted)] : [])
    }

    private static func statement(campaign: Bool, devices: Bool) -> String {
        // A statement is prepared without parameter types: each parameter's is given where it is first
        // used, and one the text does not use (the campaign, for all; the limit, without devices) is not
        // bound at all.
        let (scope, first, last, exact) =
            campaign ? ("campaign_id = $1::int8 AND ", "$2::text", "$3::text", "$4::int8") : ("", "$1::text", "$2::text", "$3::int8")
        // The parts of the sketch rows that cover the range (`DeviceSketches.Split`), bound after the limit.
        let split = (campaign ? 5...8 : 4...7).map { "$\($0)::text" }
        func sketchRows(_ columns: String, where condition: String) -> String {
            """
            SELECT \(columns) FROM device_sketches WHERE \(scope)\(condition)day BETWEEN \(first) AND \(split[0])
            UNION ALL SELECT \(columns) FROM device_week_sketches WHERE \(scope)\(condition)week BETWEEN \(split[1]) AND \(split[2])
            UNION ALL SELECT \(columns) FROM device_sketches WHERE \(scope)\(condition)day BETWEEN \(split[3]) AND \(last)
            """
        }
        let ranges = deviceRanges(campaign: campaign)
        // The kinds are the enum's own names, never input: written into the text, which stays one per shape.
        func kind(_ kind: DeviceKind) -> String { "kind = '\(kind.rawValue)'" }
        var common = [
            // Rows other than conversions are unique by the table's key, so only conversions are grouped (their
            // names left out, see `EventCounts.rows`), and nothing is ordered. Grouping and ordering
            // every row made this part of a 90-day report 2.1 ms instead of 1.0-1.2 (pgbench).
            """
            rollups AS (
                SELECT campaign_id, day, platform, test, type, detail, count
                FROM event_rollups WHERE \(scope)day BETWEEN \(first) AND \(last) AND type <> 'conversion'
                UNION ALL
                SELECT campaign_id, day, platform, test, type, '', SUM(count)::int8
                FROM event_rollups WHERE \(scope)day BETWEEN \(first) AND \(last) AND type = 'conversion'
                GROUP BY 1, 2, 3, 4, 5)
            """
        ]
        // Arrays that must be aligned row for row come from one aggregation: a subquery of the FROM list (the
        // rollups, each range's bitmap chunks and sketches). The other parts are subqueries of the select list,
        // planned once each: as yet more tables of the FROM list they made the planner weigh every order of
        // joining a dozen one-row tables (4 ms of planning a report, 1 ms now).
        var from = [
            """
            (SELECT array_agg(campaign_id) AS campaigns, array_agg(day) AS days, array_agg(platform) AS platforms,
                array_agg(test) AS tests, array_agg(type) AS types, array_agg(detail) AS details, array_agg(count) AS counts
             FROM rollups) AS rollup_rows
            """
        ]
        var columns = ["rollup_rows.*"]
        if devices {
            common.append(
                """
                sketched AS MATERIALIZED (
                    SELECT \(ranges.map { "COALESCE(SUM(chunks) FILTER (WHERE test = \($0.test) AND \(kind($0.kind))), 0)::int8 AS \($0.name)_chunks" }
                        .joined(separator: ", "))
                    FROM (\(sketchRows("test, kind, chunks", where: "kind IN (\(Set(ranges.map { "'\($0.kind.rawValue)'" }).sorted().joined(separator: ", "))) AND ")))
                        AS sketch_chunks)
                """)
            from.append("sketched")
            columns.append("sketched.*")
            let campaigns = "FROM campaigns\(campaign ? " WHERE id = $1" : "")"
            columns.append("(SELECT array_agg(id ORDER BY id) \(campaigns)) AS app_campaigns")
            columns.append("(SELECT array_agg(app_id ORDER BY id) \(campaigns)) AS apps")
            for (name, test, rangeKind) in ranges {
                // As `PackedBlobs` reads them, from one aggregation each so that the arrays are aligned. The
                // condition on the count is evaluated once, before the table is read: a range past the limit
                // reads no chunk, one within it no sketch.
                from.append(
                    """
                    (SELECT array_agg(campaign_id) AS \(name)_bitmap_campaigns, array_agg(chunk) AS \(name)_bitmap_chunks,
                        array_agg(length(bits)) AS \(name)_bitmap_lengths, string_agg(bits, ''::bytea) AS \(name)_bitmaps
                     FROM device_bitmaps WHERE \(scope)test = \(test) AND \(kind(rangeKind)) AND day BETWEEN \(first) AND \(last)
                        AND (SELECT \(name)_chunks FROM sketched) BETWEEN 1 AND \(exact)) AS \(name)_bitmap_rows
                    """)
                columns.append("\(name)_bitmap_rows.*")
                if campaign {
                    from.append(
                        """
                        (SELECT array_agg(length(registers)) AS \(name)_sketch_lengths, string_agg(registers, ''::bytea) AS \(name)_sketches
                         FROM (\(sketchRows("registers", where: "test = \(test) AND \(kind(rangeKind)) AND (SELECT \(name)_chunks FROM sketched) > \(exact) AND ")))
                            AS sketch_rows
                        ) AS \(name)_sketch_rows
                        """)
                    columns.append("\(name)_sketch_rows.*")
                }
            }
        }
        if campaign {
            common.append(
                """
                top_conversions AS (
                    SELECT detail, SUM(count)::int8 AS total FROM event_rollups
                    WHERE campaign_id = $1 AND day BETWEEN \(first) AND \(last) AND NOT test AND type = 'conversion'
                    GROUP BY detail ORDER BY total DESC, detail LIMIT \(EventCounts.topConversionEvents)),
                shown AS (
                    SELECT language, type, SUM(count) AS count FROM event_language_rollups
                    WHERE campaign_id = $1 AND day BETWEEN \(first) AND \(last) AND NOT test
                    GROUP BY language, type),
                top_languages AS (
                    SELECT language FROM shown GROUP BY language
                    ORDER BY SUM(CASE WHEN type = 'impression' THEN count ELSE 0 END) DESC, SUM(count) DESC, language
                    LIMIT \(EventCounts.topLanguages)),
                split AS (
                    SELECT CASE WHEN language IN (SELECT language FROM top_languages) THEN language END AS named, type,
                        SUM(count)::int8 AS count
                    FROM shown GROUP BY named, type),
                discarded AS (
                    SELECT test, reason, SUM(count)::int8 AS count FROM discard_rollups
                    WHERE campaign_id = $1 AND day BETWEEN \(first) AND \(last)
                    GROUP BY test, reason)
                """)
            // Arrays of one part are aligned by the same total order (each row's key is unique).
            let conversions = "ORDER BY total DESC, detail) FROM top_conversions"
            columns.append("(SELECT array_agg(detail \(conversions)) AS conversion_events")
            columns.append("(SELECT array_agg(total \(conversions)) AS conversion_totals")
            let languages = "ORDER BY named NULLS FIRST, type) FROM split"
            columns.append("(SELECT array_agg(named IS NULL \(languages)) AS language_others")
            columns.append("(SELECT array_agg(COALESCE(named, '') \(languages)) AS language_tags")
            columns.append("(SELECT array_agg(type \(languages)) AS language_types")
            columns.append("(SELECT array_agg(count \(languages)) AS language_counts")
            let discards = "ORDER BY test, reason) FROM discarded"
            columns.append("(SELECT array_agg(test \(discards)) AS discard_tests")
            columns.append("(SELECT array_agg(reason \(discards)) AS discard_reasons")
            columns.append("(SELECT array_agg(count \(discards)) AS discard_counts")
        }
        return """
            WITH \(common.joined(separator: ",\n"))
            SELECT \(columns.joined(separator: ",\n")) FROM \(from.joined(separator: ", "))
            """
    }

    /// The counts in the statement's row; the unique devices are left to `DeviceBitmaps`, with what the row
    /// read ahead put in `deviceRows`.
    static func decode(
        _ row: PostgresRow, campaignID: Int64?, from: String, to: String, devices: Bool, into deviceRows: inout PostgresDeviceRows
    ) throws -> EventCounts {
        let cells = row.makeRandomAccess()
        func cell(_ name: String) -> PostgresCell { cells.preparedCell(name) }
        func array<T: PostgresBinaryArray.Element>(_ name: String, of type: T.Type) throws -> [T] {
            try PostgresBinaryArray.read(cell(name), as: T.self)
        }
        func sameCount(_ counts: Int...) throws {
            guard Set(counts).count <= 1 else { throw PackedBlobs.Mismatch() }
        }

        let (campaigns, days, platforms, tests) = (
            try array("campaigns", of: Int64.self), try array("days", of: String.self), try array("platforms", of: String.self),
            try array("tests", of: Bool.self)
        )
        let (types, details, totals) = (try array("types", of: String.self), try array("details", of: String.self), try array("counts", of: Int64.self))
        try sameCount(campaigns.count, days.count, platforms.count, tests.count, types.count, details.count, totals.count)
        var rows: [EventCounts.Row] = []
        rows.reserveCapacity(campaigns.count)
        for index in campaigns.indices {
            guard let type = EventType(rawValue: types[index]) else { continue }
            rows.append(
                EventCounts.Row(
                    campaignID: campaigns[index], day: days[index], platform: platforms[index], test: tests[index], type: type,
                    detail: details[index], count: Int(clamping: totals[index])))
        }
        var counts = EventCounts(rows: rows, uniqueDevices: 0, uniqueTestDevices: 0)

        if devices {
            let (appCampaigns, apps) = (try array("app_campaigns", of: Int64.self), try array("apps", of: Int64.self))
            try sameCount(appCampaigns.count, apps.count)
            deviceRows.appsReadAhead = (campaignID, Dictionary(zip(appCampaigns, apps), uniquingKeysWith: { first, _ in first }))
            for (name, test, kind) in deviceRanges(campaign: campaignID != nil) {
                var known = PostgresDeviceRows.RangeReadAhead(chunkCount: Int(clamping: try cell("\(name)_chunks").decode(Int64.self)))
                if let bits = try cell("\(name)_bitmaps").decode(ByteBuffer?.self) {
                    known.chunks = PackedBlobs(
                        campaigns: try array("\(name)_bitmap_campaigns", of: Int64.self), chunks: try array("\(name)_bitmap_chunks", of: Int64.self),
                        lengths: try array("\(name)_bitmap_lengths", of: Int32.self), bytes: bits)
                }
                if campaignID != nil, let registers = try cell("\(name)_sketches").decode(ByteBuffer?.self) {
                    known.sketches = PackedBlobs(lengths: try array("\(name)_sketch_lengths", of: Int32.self), bytes: registers)
                }
                deviceRows.readAhead[DeviceRange(campaignID: campaignID, from: from, to: to, test: test, kind: kind)] = known
            }
        }

        if campaignID != nil {
            let (events, conversionTotals) = (try array("conversion_events", of: String.self), try array("conversion_totals", of: Int64.self))
            try sameCount(events.count, conversionTotals.count)
            counts.topConversions = zip(events, conversionTotals).map { EventCounts.Conversion(event: $0, count: Int(clamping: $1)) }
            counts.otherConversions = EventCounts.otherConversions(rows: rows, top: counts.topConversions)
            let (others, tags) = (try array("language_others", of: Bool.self), try array("language_tags", of: String.self))
            let (languageTypes, languageCounts) = (try array("language_types", of: String.self), try array("language_counts", of: Int64.self))
            try sameCount(others.count, tags.count, languageTypes.count, languageCounts.count)
            let shown = others.indices.map { index in
                (named: others[index] ? nil : tags[index], type: languageTypes[index], count: Int(clamping: languageCounts[index]))
            }
            (counts.topLanguages, counts.otherLanguages) = EventCounts.languages(shown)
            let (discardTests, reasons) = (try array("discard_tests", of: Bool.self), try array("discard_reasons", of: String.self))
            let discardCounts = try array("discard_counts", of: Int64.self)
            try sameCount(discardTests.count, reasons.count, discardCounts.count)
            counts.addDiscards(discardTests.indices.map { (test: discardTests[$0], reason: reasons[$0], count: Int(clamping: discardCounts[$0])) })
        }
        return counts
    }
}
