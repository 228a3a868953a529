import Foundation
import HeraldDomain

/// Messages' images on disk, so a message shows with its images at once and its renderer reads them
/// from a file. At most `limit` bytes: the least recently used image goes first, and an image no
/// campaign uses any more is deleted when the feed changes (`keep(only:)`).
struct ImageCache {
    /// One cached image: its file in the folder, its size, and when it was last used (a counter, so
    /// the order does not depend on the clock).
    struct Entry: Codable, Sendable, Equatable {
        var file: String
        var bytes: Int
        var lastUse: UInt64
    }

    struct Index: Codable, Sendable {
        var entries: [String: Entry] = [:]
        var uses: UInt64 = 0
    }

    /// An image larger than the whole cache.
    struct TooLarge: Error, CustomStringConvertible {
        let bytes: Int
        var description: String { "an image of \(bytes) bytes is larger than the image cache" }
    }

    let folder: URL
    let limit: Int
    private(set) var index: Index

    private var indexFile: URL { folder.appendingPathComponent("index.json") }

    /// Opens the cache in `folder`, forgetting entries whose file is gone and deleting files no entry names
    /// (left by a crash between writing an image and its index).
    init(folder: URL, limit: Int) throws {
        self.folder = folder
        self.limit = max(0, limit)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let stored = (try? Data(contentsOf: folder.appendingPathComponent("index.json")))
            .flatMap { try? CampaignJSON.decoder().decode(Index.self, from: $0) } ?? Index()
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        index = stored
        index.entries = stored.entries.filter { files.contains($0.value.file) }
        let named = Set(index.entries.values.map(\.file))
        for file in files where file != "index.json" && !named.contains(file) {
            // A stray file that will not go only takes space; the cache works without deleting it.
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(file))
        }
        if index.entries.count != stored.entries.count { try saveIndex() }
    }

    var totalBytes: Int { index.entries.values.reduce(0) { $0 + $1.bytes } }

    /// The file of a loaded image, if it is cached.
    func file(for url: String) -> URL? {
        index.entries[url].map { folder.appendingPathComponent($0.file) }
    }

    /// Keeps `data` as the image at `url`, evicting the least recently used images to stay within the limit.
    @discardableResult
    mutating func store(_ data: Data, for url: String) throws -> URL {
        guard data.count <= limit else { throw TooLarge(bytes: data.count) }
        try remove(url)
        while totalBytes + data.count > limit, let oldest = index.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            try remove(oldest.key)
        }
        index.uses += 1
        // The counter makes every name new, so a file is never overwritten while a renderer may read it.
        let name = String(FNV1a.hash(url), radix: 16) + "-" + String(index.uses)
        let file = folder.appendingPathComponent(name)
        try data.write(to: file, options: .atomic)
        index.entries[url] = Entry(file: name, bytes: data.count, lastUse: index.uses)
        try saveIndex()
        return file
    }

    /// Marks the images as just used, so they are the last to go.
    mutating func touch(_ urls: [String]) throws {
        var changed = false
        for url in urls where index.entries[url] != nil {
            index.uses += 1
            index.entries[url]?.lastUse = index.uses
            changed = true
        }
        if changed { try saveIndex() }
    }

    /// Deletes every image but `urls`: those of campaigns that left the feed.
    mutating func keep(only urls: Set<String>) throws {
        for url in index.entries.keys where !urls.contains(url) {
            try remove(url)
        }
    }

    private mutating func remove(_ url: String) throws {
        guard let entry = index.entries.removeValue(forKey: url) else { return }
        let file = folder.appendingPathComponent(entry.file)
        if FileManager.default.fileExists(atPath: file.path) {
            try FileManager.default.removeItem(at: file)
        }
        try saveIndex()
    }

    private func saveIndex() throws {
        try CampaignJSON.encoder().encode(index).write(to: indexFile, options: .atomic)
    }
}
