import Foundation

/// Compressed bodies that inflate to far more than they weigh (every byte zero), for tests of clients
/// that must not inflate without bound. DEFLATE ones are built with its fixed Huffman codes: one
/// literal zero, then copies of 258 bytes at distance 1 (13 bits each, about 1 : 1,270); zstd ones
/// from RLE blocks; the brotli one is a constant.
public enum DeflateBomb {
    /// A raw DEFLATE stream of `inflatedSize` zero bytes (rounded to 1 + 258 × n).
    public static func deflate(inflatedSize: Int) -> [UInt8] {
        var writer = BitWriter()
        writer.write(bits: 1, count: 1)          // BFINAL
        writer.write(bits: 1, count: 2)          // BTYPE 01: fixed Huffman codes
        writer.writeCode(0b0011_0000, length: 8) // literal 0
        let copies = max(0, (inflatedSize - 1) / 258)
        // Eight copies are 104 bits, 13 whole bytes, so from the second group of eight on every group
        // appends the same 13 bytes: they are written bit by bit once and then repeated, which keeps a
        // 256 MiB bomb (a million copies) from taking seconds of a test's thread in a debug build.
        let groups = copies / 8
        if groups >= 2 {
            writer.writeCopies(8)
            let period = writer.writeCopies(8)
            writer.append(period, times: groups - 2)
        } else {
            writer.writeCopies(groups * 8)
        }
        writer.writeCopies(copies - groups * 8)
        writer.writeCode(0, length: 7)           // end of block (code 256)
        return writer.bytes()
    }

    /// The same as a gzip member (`Content-Encoding: gzip`); its CRC is not computed (a client inflates
    /// everything before it could check it).
    public static func gzip(inflatedSize: Int) -> [UInt8] {
        let size = UInt32(truncatingIfNeeded: inflatedSize)
        return [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03] + deflate(inflatedSize: inflatedSize)
            + [0, 0, 0, 0] + [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24)]
    }

    /// The same in the zlib wrapper HTTP's `deflate` coding uses (its Adler-32 is not computed).
    public static func zlib(inflatedSize: Int) -> [UInt8] {
        [0x78, 0x9C] + deflate(inflatedSize: inflatedSize) + [0, 0, 0, 0]
    }

    /// A zstd frame (RFC 8878) of `inflatedSize` zero bytes (rounded up to 128 KiB × n): RLE blocks of
    /// 128 KiB, four bytes each (about 1 : 32,768), no checksum.
    public static func zstd(inflatedSize: Int) -> [UInt8] {
        let blockSize = 128 * 1024
        let blocks = max(1, (inflatedSize + blockSize - 1) / blockSize)
        // Magic number; frame header: no single segment, no checksum, no dictionary, no content size;
        // window descriptor 0x38 (a 128 KiB window).
        var frame: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x38]
        frame.reserveCapacity(frame.count + blocks * 4)
        for index in 0..<blocks {
            // Block header, little-endian 24 bits: last-block flag, type 1 (RLE), size; then the byte.
            let header = UInt32(blockSize) << 3 | 1 << 1 | (index == blocks - 1 ? 1 : 0)
            frame += [UInt8(header & 0xFF), UInt8(header >> 8 & 0xFF), UInt8(header >> 16 & 0xFF), 0x00]
        }
        return frame
    }

    /// `bytes` as a zstd frame of raw (stored) blocks: what a server sends for a small body in zstd.
    public static func zstdFrame(storing bytes: [UInt8]) -> [UInt8] {
        let blockSize = 128 * 1024
        var frame: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x38]
        var start = 0
        repeat {
            let end = min(bytes.count, start + blockSize)
            let header = UInt32(end - start) << 3 | (end == bytes.count ? 1 : 0)
            frame += [UInt8(header & 0xFF), UInt8(header >> 8 & 0xFF), UInt8(header >> 16 & 0xFF)] + bytes[start..<end]
            start = end
        } while start < bytes.count
        return frame
    }

    /// A brotli stream (RFC 7932) of 256 MiB of zero bytes in 211 bytes (about 1 : 1,270,000), made
    /// here with `head -c 268435456 /dev/zero | brotli -q 11` (brotli 1.0.9).
    public static let brotli256MiB: [UInt8] = Array(Data(base64Encoded: brotli256MiBBase64) ?? Data())

    /// The inflated size of ``brotli256MiB``.
    public static let brotliInflatedSize = 268_435_456

    private static let brotli256MiBBase64 =
        "z///f/gnAOKxQCD3/p/////wTwDEYQGA7v0/////4Z8AiMMiAN37f/7//8M/ARCHBQC69//8//+HfwIgDgsAdO//+f//D/8EQBwWAOje//P//x/+CYA4LADQvf/n//8//BMAcVgAoHv/z///f/gnAOKwAED3/p/////wTwDEYQGA7v0/////4Z8AiMMCAN37f/7//8M/ARCHBQC69//8//+HfwIgDgsAdO//+f//D/8EQBwWAOje//P//x/+CYA4LADQvf/n//8//BMAcVgAoHv/Pw=="

    /// `coding`'s bomb of about `inflatedSize` zero bytes: `gzip`, `deflate` (zlib), `zstd` or `br`
    /// (always 256 MiB).
    public static func body(coding: String, inflatedSize: Int) -> [UInt8] {
        switch coding {
        case "gzip": gzip(inflatedSize: inflatedSize)
        case "deflate": zlib(inflatedSize: inflatedSize)
        case "zstd": zstd(inflatedSize: inflatedSize)
        default: brotli256MiB
        }
    }

    /// DEFLATE's bit order: fields least significant bit first, Huffman codes most significant first.
    private struct BitWriter {
        private var output: [UInt8] = []
        private var current: UInt8 = 0
        private var used = 0

        mutating func write(bits value: UInt32, count: Int) {
            for index in 0..<count { push((value >> UInt32(index)) & 1 == 1) }
        }

        mutating func writeCode(_ code: UInt32, length: Int) {
            for index in stride(from: length - 1, through: 0, by: -1) { push((code >> UInt32(index)) & 1 == 1) }
        }

        /// Writes `count` copies of 258 bytes at distance 1 and returns the whole bytes they appended.
        @discardableResult
        mutating func writeCopies(_ count: Int) -> [UInt8] {
            let start = output.count
            for _ in 0..<count {
                writeCode(0b1100_0101, length: 8) // length 258 (code 285)
                writeCode(0, length: 5)            // distance 1 (code 0)
            }
            return Array(output[start...])
        }

        /// Appends `bytes` `times` times; only whole groups of eight copies, which leave the bit
        /// position where it was, may be repeated this way.
        mutating func append(_ bytes: [UInt8], times: Int) {
            output.reserveCapacity(output.count + bytes.count * times + 16)
            for _ in 0..<times { output += bytes }
        }

        private mutating func push(_ bit: Bool) {
            if bit { current |= 1 << UInt8(used) }
            used += 1
            if used == 8 {
                output.append(current)
                current = 0
                used = 0
            }
        }

        func bytes() -> [UInt8] { used > 0 ? output + [current] : output }
    }
}
