import CodexCore
import Foundation
import Synchronization

/// What executors hand the runtime besides their results: progress, sent as events in order with the
/// turn's others, and images given as bytes, kept until the batch ends and then stored with the
/// downloaded tool images. One per turn.
final class ToolCallOutputs: Sendable {
    private let images = Mutex<[ToolInvocationID: [AgentImageAttachment]]>([:])

    /// Keeps `data` for `invocation` when it is a complete PNG, JPEG, GIF, WebP, HEIC or HEIF image of at
    /// most ``CodexCore/AgentImageAttachment/maximumByteCount`` bytes, and the batch holds fewer than
    /// ``CodexCore/AgentImageAttachment/maximumPerMessage`` (the images of one batch become one message);
    /// returns the refusal's reason otherwise.
    func attach(_ data: Data, for invocation: ToolInvocationID) -> String? {
        guard data.count <= AgentImageAttachment.maximumByteCount else { return "too_large" }
        guard let mimeType = AgentImageAttachment.completeImageMimeType(data) else {
            return AgentImageAttachment.sniffMimeType(data) == nil ? "not_an_image" : "truncated_image"
        }
        return images.withLock { images in
            guard images.values.reduce(0, { $0 + $1.count }) < AgentImageAttachment.maximumPerMessage else { return "too_many_images" }
            images[invocation, default: []].append(AgentImageAttachment(data: data, mimeType: mimeType))
            return nil
        }
    }

    /// Removes and returns the images of `invocations`, in their order.
    func takeImages(for invocations: [ToolInvocationID]) -> [AgentImageAttachment] {
        images.withLock { images in invocations.flatMap { images.removeValue(forKey: $0) ?? [] } }
    }
}

/// The runtime's side of one ``ToolExecutionContext``: where its progress and images go.
struct ToolExecutionHooks: Sendable {
    /// Sends a progress event for the call.
    let progress: @Sendable (AgentTurnProgress) async -> Void
    /// Where images go.
    let outputs: ToolCallOutputs
    /// Told `tools.image.omitted` for a refused image.
    let logSink: any AgentLogSink
}
