import Foundation
import NIOCore
import NIOHTTP1

/// Collects one HTTP request at a time (an HTTP/2 stream, or the next request on an HTTP/1.1
/// connection), body capped, and hands it to `answer`, which replies through the given closure,
/// at once or later (held requests).
final class MockRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// More body than this is dropped; providers refuse far less, and the answer says so.
    static let bodyLimit = 1_048_576

    typealias Answer = @Sendable (MockRequest, @escaping @Sendable (MockResponse) -> Void) -> Void

    private let answer: Answer
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(answer: @escaping Answer) {
        self.answer = answer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(var buffer):
            let room = Self.bodyLimit - body.count
            if room > 0, let bytes = buffer.readBytes(length: min(room, buffer.readableBytes)) { body += bytes }
        case .end:
            guard let head else { return }
            self.head = nil
            let target = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
            let request = MockRequest(
                method: head.method.rawValue, path: target.first.map(String.init) ?? "",
                query: target.count > 1 ? String(target[1]) : "",
                headers: head.headers.map { (name: $0.name.lowercased(), value: $0.value) },
                body: body, receivedAt: Date(), httpVersion: head.version.major == 2 ? "2" : "\(head.version.major).\(head.version.minor)")
            body = []
            let version = head.version
            let keepAlive = head.isKeepAlive
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            answer(request) { response in
                eventLoop.execute {
                    Self.write(response, version: version, keepAlive: keepAlive, on: bound.value)
                }
            }
        }
    }

    private static func write(_ response: MockResponse, version: HTTPVersion, keepAlive: Bool, on context: ChannelHandlerContext) {
        var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        headers.replaceOrAdd(name: "content-length", value: String(response.body.count))
        if version.major == 1 && !keepAlive { headers.replaceOrAdd(name: "connection", value: "close") }
        let head = HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        if !response.body.isEmpty {
            context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        }
        let done = context.writeAndFlushWithPromise(NIOAny(HTTPServerResponsePart.end(nil)))
        if version.major == 1 && !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

private extension ChannelHandlerContext {
    func writeAndFlushWithPromise(_ data: NIOAny) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        writeAndFlush(data, promise: promise)
        return promise.futureResult
    }
}

/// Closes a connection whose TLS or HTTP/2 failed instead of leaving it open.
final class CloseOnErrorHandler: ChannelInboundHandler {
    typealias InboundIn = Any

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
