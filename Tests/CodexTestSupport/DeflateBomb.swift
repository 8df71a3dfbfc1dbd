/// Compressed bodies that inflate to far more than they weigh (every byte zero), for tests of clients
/// that must not inflate without bound. Built with DEFLATE's fixed Huffman codes: one literal zero, then
/// copies of 258 bytes at distance 1 (13 bits each, about 1 : 1,270).
public enum DeflateBomb {
    /// A raw DEFLATE stream of `inflatedSize` zero bytes (rounded to 1 + 258 × n).
    public static func deflate(inflatedSize: Int) -> [UInt8] {
        var writer = BitWriter()
        writer.write(bits: 1, count: 1)          // BFINAL
        writer.write(bits: 1, count: 2)          // BTYPE 01: fixed Huffman codes
        writer.writeCode(0b0011_0000, length: 8) // literal 0
        for _ in 0..<max(0, (inflatedSize - 1) / 258) {
            writer.writeCode(0b1100_0101, length: 8) // length 258 (code 285)
            writer.writeCode(0, length: 5)            // distance 1 (code 0)
        }
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
