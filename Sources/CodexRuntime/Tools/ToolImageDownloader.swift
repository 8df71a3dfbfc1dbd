import CodexCore
import CodexTransport
import Foundation
import Synchronization

/// Fetches the images a tool result names by URL (``CodexCore/ToolResultContent/image(_:)``) and keeps
/// only real, complete ones: `http` and `https` URLs only, a 2xx reply, at most
/// ``AgentImageAttachment/maximumByteCount`` bytes (enforced while reading), within the timeouts, and
/// bytes that are a complete PNG, JPEG, GIF, WebP, HEIC or HEIF image by their own signature (a
/// declared `Content-Type` is ignored). Everything else (an error page, HTML, a truncated image, a lost
/// connection) is omitted and logged as `tools.image.omitted` with the reason. Accepted bytes are kept
/// unchanged. Cancellation propagates.
final class ToolImageDownloader: Sendable {
    /// Timeouts of one download.
    static let timeouts = HTTPTimeouts(connect: .seconds(10), firstByte: .seconds(30), idle: .seconds(30), total: .seconds(60))

    private let configured: (any HTTPClient)?
    private let created = Mutex<(any HTTPClient)?>(nil)
    private let logSink: any AgentLogSink

    /// Creates a downloader over `httpClient`, or over a ``CodexTransport/DefaultHTTPClient`` made on
    /// first use when it is `nil`.
    init(httpClient: (any HTTPClient)?, logSink: any AgentLogSink) {
        configured = httpClient
        self.logSink = logSink
    }

    private var client: any HTTPClient {
        if let configured { return configured }
        return created.withLock { created in
            if let created { return created }
            let client = DefaultHTTPClient()
            created = client
            return client
        }
    }

    /// The attachments for the image URLs in `results`, in order, at most
    /// ``AgentImageAttachment/maximumPerMessage``.
    func attachments(for results: [ToolResultEnvelope]) async throws -> [AgentImageAttachment] {
        var attachments: [AgentImageAttachment] = []
        for result in results {
            for case .image(let url) in result.content {
                guard attachments.count < AgentImageAttachment.maximumPerMessage else {
                    omit("too_many_images", tool: result.toolName)
                    continue
                }
                if let attachment = try await download(url, tool: result.toolName) { attachments.append(attachment) }
            }
        }
        return attachments
    }

    /// One image, or `nil` when it is omitted.
    func download(_ url: URL, tool: String) async throws -> AgentImageAttachment? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            omit("unsupported_scheme", tool: tool)
            return nil
        }
        let bytes: [UInt8]
        do {
            let response = try await client.send(HTTPRequest(method: "GET", url: url, headers: ["Accept": "image/*"], timeouts: Self.timeouts))
            guard response.isSuccess else {
                response.body.cancel()
                omit("http_\(response.statusCode)", tool: tool)
                return nil
            }
            bytes = try await response.body.collect(upTo: AgentImageAttachment.maximumByteCount)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            try Task.checkCancellation()
            omit((error as? AgentRuntimeError)?.code.rawValue ?? "transport_failure", tool: tool)
            return nil
        }
        let data = Data(bytes)
        guard let mimeType = AgentImageAttachment.completeImageMimeType(data) else {
            omit(AgentImageAttachment.sniffMimeType(data) == nil ? "not_an_image" : "truncated_image", tool: tool)
            return nil
        }
        return AgentImageAttachment(data: data, mimeType: mimeType)
    }

    private func omit(_ reason: String, tool: String) {
        logSink.record(AgentLogEvent(level: .notice, category: .tools, name: "tools.image.omitted", metadata: ["reason": reason, "tool": tool]))
    }
}
