public import Foundation

/// Small, complete images of every accepted type, built byte by byte (checksums are not checked by the
/// code under test, so they are fixed filler).
public enum TestImages {
    private static func bigEndian(_ value: Int) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func littleEndian(_ value: Int) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24 & 0xFF)]
    }

    private static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        bigEndian(data.count) + Array(type.utf8) + data + [0x12, 0x34, 0x56, 0x78]
    }

    /// A 1×1 PNG: signature, IHDR, IDAT, IEND.
    public static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        + pngChunk("IHDR", bigEndian(1) + bigEndian(1) + [8, 6, 0, 0, 0])
        + pngChunk("IDAT", [0x78, 0x9C, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01])
        + pngChunk("IEND", []))

    /// A JPEG from start-of-image to end-of-image.
    public static let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0] + [0xFF, 0xD9])

    /// A GIF89a with its trailer.
    public static let gif = Data(Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0] + [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0x00] + [0x3B])

    /// A WebP whose RIFF size covers it.
    public static let webp: Data = {
        let chunk = Array("VP8L".utf8) + littleEndian(5) + [0x2F, 0, 0, 0, 0] + [0]
        let body = Array("WEBP".utf8) + chunk
        return Data(Array("RIFF".utf8) + littleEndian(body.count) + body)
    }()

    private static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { bigEndian(payload.count + 8) + Array(type.utf8) + payload }

    /// A HEIC: `ftyp` (brand heic) and `meta`.
    public static let heic = Data(box("ftyp", Array("heic".utf8) + bigEndian(0) + Array("mif1heic".utf8)) + box("meta", [0, 0, 0, 0]))

    /// A HEIF: `ftyp` (brand mif1), `mdat` and `meta` (last, so every truncation cuts into or drops it:
    /// a cut exactly between top-level boxes is structurally complete and cannot be told apart).
    public static let heif = Data(box("ftyp", Array("mif1".utf8) + bigEndian(0) + Array("mif1".utf8)) + box("mdat", [1, 2, 3]) + box("meta", [0, 0, 0, 0]))
}
