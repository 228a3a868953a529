import CZlib
import Foundation
import HeraldHTTP
import TestSupport
import Testing

/// Generated `Accept-Encoding` headers, which choose between the feed's gzipped and plain bytes, and
/// generated bodies through `Gzip.compress`: the reader agrees with a plainly written model of RFC 9110
/// §12.5.3 and never traps; what is compressed inflates back to the same bytes.
@Suite("Generated inputs: Accept-Encoding and gzip")
struct ContentCodingProperty {
    /// The model: elements split on commas, parameters on semicolons, a weight that is not a qvalue skips
    /// its element, and the first element naming gzip (or x-gzip), else the first `*`, decides.
    static func modelAcceptsGzip(_ header: String) -> Bool {
        var named: Double?
        var any: Double?
        let qvalue = /^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$/
        for element in header.unicodeScalars.split(separator: ",") {
            let parts = element.split(separator: ";", omittingEmptySubsequences: false).map { String(String.UnicodeScalarView($0)) }
            let name = trim(parts[0])
            guard !name.isEmpty else { continue }
            var weight: Double? = 1
            for parameter in parts.dropFirst() {
                let pair = trim(parameter)
                guard let equals = pair.unicodeScalars.firstIndex(of: "=") else { continue }
                let key = String(pair.unicodeScalars[..<equals])
                guard key == "q" || key == "Q" else { continue }
                let value = trim(String(pair.unicodeScalars[pair.unicodeScalars.index(after: equals)...]))
                weight = value.wholeMatch(of: qvalue.matchingSemantics(.unicodeScalar)) != nil ? Double(value) : nil
                if weight == nil { break }
            }
            guard let weight else { continue }
            let ascii = name.unicodeScalars.allSatisfy(\.isASCII)
            if ascii, ["gzip", "x-gzip"].contains(name.lowercased()) {
                if named == nil { named = weight }
            } else if name == "*", any == nil {
                any = weight
            }
        }
        return (named ?? any ?? 0) > 0
    }

    static func trim(_ text: String) -> String {
        var scalars = Substring(text).unicodeScalars
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }

    static func header(_ draw: inout Draw) -> String {
        let names = ["gzip", "GZIP", "x-gzip", "X-Gzip", "gzi", "gzipp", "*", "identity", "br", "deflate", "", " ", "gzip\u{301}", "ğzip", "ｇzip"]
        let weights = ["", ";q=1", ";q=0", ";q=0.5", ";q=0.000", ";q=0.0001", ";q=1.000", ";q=1.001", ";q=.5", ";q=", ";q=-0",
                       "; q=0", ";Q=0", ";q =0", ";q= 0 ", ";q=0;q=1", ";q=x;q=1", ";level=1", ";q=0\u{660}", ";q=2", ";q=١"]
        var header = draw.list(0...12) { draw in
            draw.pick([" ", "", "\t"]) + draw.pick(names) + draw.pick(weights) + draw.pick(["", " ", "\t"])
        }.joined(separator: draw.pick([",", ", ", ",,", " , "]))
        if draw.chance(0.1) { header.unicodeScalars.append(draw.scalar(0...0x10FFFF)) }
        if draw.chance(0.05) { header += String(repeating: ",gzip;q=0", count: draw.int(0...2000)) }
        return header
    }

    @Test("Any Accept-Encoding header is read as the model reads it: gzip when named with a weight above 0, or left to `*`")
    func acceptEncoding() {
        var run = GeneratedRun("Accept-Encoding", cases: 5_000)
        run.run(Generated.cases { draw in Self.header(&draw) }) { header, run in
            let accepted = AcceptEncoding.accepts("gzip", in: header)
            run.expect(accepted == Self.modelAcceptsGzip(header), "read as \(accepted ? "gzip" : "identity")", input: header)
            // The first element naming gzip decides, whatever follows.
            run.expect(!AcceptEncoding.accepts("gzip", in: "gzip;q=0, " + header), "a leading gzip;q=0 was overruled", input: header)
            run.expect(AcceptEncoding.accepts("gzip", in: "x-gzip, " + header), "a leading x-gzip was overruled", input: header)
            run.note(accepted ? "gzip" : "identity")
        }
    }

    @Test("Hand-picked Accept-Encoding headers", arguments: [
        (nil, false), ("", false), ("gzip", true), ("GZip", true), ("x-gzip", true), ("gzip;q=0", false), ("gzip; q=0.001", true),
        ("br;q=1.0, gzip;q=0.8, *;q=0.1", true), ("identity", false), ("*", true), ("*;q=0", false), ("*, gzip;q=0", false),
        ("gzip;q=1.5", false), ("gzip;q=0.5, gzip;q=0", true), ("deflate, br", false), ("gzip;q=abc, *", true),
    ] as [(String?, Bool)])
    func handPicked(header: String?, gzip: Bool) {
        #expect(AcceptEncoding.accepts("gzip", in: header) == gzip)
    }

    @Test("Any body, random or repetitive, of 0 to 200,000 bytes, gzips to bytes that inflate back to it")
    func gzipRoundTrip() throws {
        var run = GeneratedRun("gzip round trip", cases: 300)
        run.run(Generated.cases { draw -> [UInt8] in
            let count = draw.pick([0, 1, draw.int(0...300), draw.int(0...200_000)])
            if draw.chance(0.5) { return draw.list(count...count) { draw in UInt8(draw.int(0...255)) } }
            let unit = Array(#"{"id":1,"title":{"text":"فروش ویژه"},"data":[]},"#.utf8)
            return Array((0..<(count / unit.count + 1)).flatMap { _ in unit }.prefix(count))
        }) { body, run in
            guard let gzipped = Gzip.compress(body) else { return run.fail("compress failed", input: body.count) }
            run.expect(Array(gzipped.prefix(2)) == [0x1F, 0x8B], "not the gzip format", input: body.count)
            run.expect(gunzip(gzipped) == body, "does not inflate to the same \(body.count) bytes", input: body.count)
            run.note(gzipped.count < body.count ? "smaller" : "not smaller")
        }
    }

}
