public import Foundation

extension AgentImageAttachment {
    /// The media type of `data` when it is a complete PNG, JPEG, GIF, WebP, HEIC or HEIF image, judged
    /// by the bytes alone (never a declared type); `nil` for anything else, including an image cut short.
    ///
    /// Completeness: PNG chunks are walked to `IEND`; JPEG ends with the end-of-image marker; GIF with
    /// its trailer; WebP's RIFF size covers the bytes; HEIC and HEIF top-level boxes all fit and include
    /// `ftyp` first and a `meta` box. Walks are linear and never read past the end.
    public static func completeImageMimeType(_ data: Data) -> String? {
        guard let type = sniffMimeType(data) else { return nil }
        return data.withUnsafeBytes { raw in isComplete(type, raw.bindMemory(to: UInt8.self)) } ? type : nil
    }

    private static func isComplete(_ type: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch type {
        case "image/png": return isCompletePNG(bytes)
        case "image/jpeg": return bytes.count >= 4 && bytes[bytes.count - 2] == 0xFF && bytes[bytes.count - 1] == 0xD9
        case "image/gif": return bytes.count >= 14 && bytes[bytes.count - 1] == 0x3B
        case "image/webp": return isCompleteWebP(bytes)
        default: return isCompleteISOBMFF(bytes)
        }
    }

    private static func bigEndian32(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int) -> Int {
        Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
    }

    private static func isCompletePNG(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = bigEndian32(bytes, offset)
            let type = bytes[(offset + 4)..<(offset + 8)]
            let next = offset + 12 + length
            guard length <= bytes.count, next <= bytes.count else { return false }
            if type.elementsEqual("IEND".utf8) { return true }
            offset = next
        }
        return false
    }

    private static func isCompleteWebP(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 16 else { return false }
        let size = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
        return size >= 8 && size + 8 <= bytes.count
    }

    private static func isCompleteISOBMFF(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var offset = 0
        var sawMeta = false
        var first = true
        while offset < bytes.count {
            guard offset + 8 <= bytes.count else { return false }
            var size = bigEndian32(bytes, offset)
            let type = bytes[(offset + 4)..<(offset + 8)]
            if first, !type.elementsEqual("ftyp".utf8) { return false }
            first = false
            if size == 1 {
                guard offset + 16 <= bytes.count else { return false }
                let high = bigEndian32(bytes, offset + 8)
                guard high == 0 else { return false }
                size = bigEndian32(bytes, offset + 12)
                guard size >= 16 else { return false }
            } else if size == 0 {
                size = bytes.count - offset
            }
            guard size >= 8, size <= bytes.count - offset else { return false }
            if type.elementsEqual("meta".utf8) { sawMeta = true }
            offset += size
        }
        return sawMeta
    }
}
