@testable import HeraldConsole

/// `WebOrigin.parse`, the reader of the origins admins allow: whatever it accepts is written as browsers
/// write `Origin` (so the one lookup per browser request matches the header) and reads back as itself.
enum WebOriginTarget {
    static func run(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard case .success(let origin) = WebOrigin.parse(text) else { return }
        let written = origin.text
        require(written.utf8.count <= WebOrigin.maxLength + 8, "\(text.debugDescription) was accepted as \(written), longer than any origin")
        require(written.hasPrefix("https://") || written.hasPrefix("http://"), "\(text.debugDescription) was accepted as \(written), without its scheme")
        require(written == written.lowercased() && written.unicodeScalars.allSatisfy(\.isASCII),
                "\(text.debugDescription) was accepted as \(written), not as a browser writes an origin")
        let https = written.hasPrefix("https://")
        require(!written.hasSuffix(https ? ":443" : ":80") && !written.dropFirst(https ? 8 : 7).contains("/"),
                "\(text.debugDescription) was accepted as \(written), with its scheme's default port or a path")
        guard case .success(let again) = WebOrigin.parse(written) else {
            require(false, "\(written) (from \(text.debugDescription)) does not read back")
            return
        }
        require(again == origin, "\(written) reads back as \(again.text)")
    }
}
