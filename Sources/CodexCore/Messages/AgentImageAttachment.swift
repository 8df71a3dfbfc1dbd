public import Foundation

/// An image in a message: bytes, media type and, for generated images, generation details.
///
/// Image bytes are kept out of database rows by the stores (content-addressed files); this value is the
/// stable app-facing shape.
public struct AgentImageAttachment: Sendable, Hashable, Codable {
    /// The largest image accepted, in bytes (50 MiB).
    public static let maximumByteCount = 50 * 1024 * 1024
    /// The most images accepted in one message.
    public static let maximumPerMessage = 32

    /// Details the image generation tool reports.
    public struct GenerationMetadata: Sendable, Hashable, Codable {
        /// The prompt as the generator rewrote it.
        public var revisedPrompt: String?
        /// The reported size, e.g. `1024x1024`.
        public var size: String?
        /// The reported quality, e.g. `high`.
        public var quality: String?
        /// The output format, e.g. `png`.
        public var outputFormat: String?
        /// The generator's background setting, e.g. `transparent`.
        public var background: String?

        /// Creates metadata.
        public init(revisedPrompt: String? = nil, size: String? = nil, quality: String? = nil, outputFormat: String? = nil, background: String? = nil) {
            self.revisedPrompt = revisedPrompt
            self.size = size
            self.quality = quality
            self.outputFormat = outputFormat
            self.background = background
        }
    }

    /// The attachment's identifier.
    public var id: AgentAttachmentID
    /// The media type, e.g. `image/png`.
    public var mimeType: String
    /// The image bytes.
    public var data: Data
    /// Generation details for generated images.
    public var generationMetadata: GenerationMetadata?

    /// Creates an attachment.
    public init(id: AgentAttachmentID = AgentAttachmentID(), data: Data, mimeType: String, generationMetadata: GenerationMetadata? = nil) {
        self.id = id
        self.data = data
        self.mimeType = mimeType
        self.generationMetadata = generationMetadata
    }

    /// A JPEG image.
    public static func jpeg(_ data: Data) -> AgentImageAttachment { AgentImageAttachment(data: data, mimeType: "image/jpeg") }
    /// A PNG image.
    public static func png(_ data: Data) -> AgentImageAttachment { AgentImageAttachment(data: data, mimeType: "image/png") }
    /// A WebP image.
    public static func webp(_ data: Data) -> AgentImageAttachment { AgentImageAttachment(data: data, mimeType: "image/webp") }
    /// A GIF image.
    public static func gif(_ data: Data) -> AgentImageAttachment { AgentImageAttachment(data: data, mimeType: "image/gif") }

    /// The `data:` URL sent as an `input_image` (`data:<mime>;base64,<bytes>`).
    public var dataURL: String { "data:\(mimeType);base64,\(data.base64EncodedString())" }

    /// The media type the bytes actually have (PNG, JPEG, GIF, WebP, HEIC or HEIF), regardless of the
    /// declared ``mimeType``; `nil` when the bytes are none of these.
    public var sniffedMimeType: String? { Self.sniffMimeType(data) }

    /// The media type of image bytes by their signature, or `nil`.
    public static func sniffMimeType(_ data: Data) -> String? {
        let bytes = [UInt8](data.prefix(16))
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)) { return "image/gif" }
        if bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) { return "image/webp" }
        if bytes.count >= 12, bytes[4..<8].elementsEqual("ftyp".utf8) {
            let brand = String(decoding: bytes[8..<12], as: UTF8.self)
            if ["heic", "heix", "hevc", "hevx"].contains(brand) { return "image/heic" }
            if ["mif1", "msf1", "heif"].contains(brand) { return "image/heif" }
        }
        return nil
    }

    /// Checks the size limit.
    ///
    /// - Throws: ``AgentRuntimeError`` with code `image_too_large`.
    public func validate() throws {
        guard data.count <= Self.maximumByteCount else {
            throw AgentRuntimeError(code: .imageTooLarge, message: "an image is larger than \(Self.maximumByteCount) bytes")
        }
    }
}
