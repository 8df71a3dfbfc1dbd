/// SHA-256 (FIPS 180-4), written here because the project takes no external packages.
///
/// ```swift
/// SHA256.hexDigest(of: Array("abc".utf8))
/// // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// var hasher = SHA256()
/// hasher.update(Array("ab".utf8)); hasher.update(Array("c".utf8))
/// let digest = hasher.finalize() // 32 bytes
/// ```
public struct SHA256: Sendable {
    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
    )
    private var buffer: [UInt8] = []
    private var totalLength: UInt64 = 0

    /// A fresh hash state.
    public init() {
        buffer.reserveCapacity(64)
    }

    /// Adds bytes to the message.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(buffer: $0) }
        if done == nil {
            let copy = Array(bytes)
            copy.withUnsafeBufferPointer { update(buffer: $0) }
        }
    }

    private mutating func update(buffer input: UnsafeBufferPointer<UInt8>) {
        totalLength &+= UInt64(input.count)
        var offset = 0
        if !buffer.isEmpty {
            let take = min(64 - buffer.count, input.count)
            buffer.append(contentsOf: input[0..<take])
            offset = take
            if buffer.count == 64 {
                buffer.withUnsafeBufferPointer { compress($0, at: 0) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
        while input.count - offset >= 64 {
            compress(input, at: offset)
            offset += 64
        }
        if offset < input.count { buffer.append(contentsOf: input[offset...]) }
    }

    /// Pads the message and returns the 32-byte digest. The state is spent afterwards.
    public mutating func finalize() -> [UInt8] {
        let bitLength = totalLength &* 8
        var padding: [UInt8] = [0x80]
        let remainder = (buffer.count + 1) % 64
        padding.append(contentsOf: repeatElement(0, count: remainder <= 56 ? 56 - remainder : 120 - remainder))
        for shift in stride(from: 56, through: 0, by: -8) { padding.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        let savedLength = totalLength
        update(padding)
        totalLength = savedLength
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        for word in [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7] {
            digest.append(contentsOf: [UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word)])
        }
        return digest
    }

    /// The digest of `bytes`.
    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The digest of `bytes` as 64 lowercase hex digits.
    public static func hexDigest(of bytes: some Sequence<UInt8>) -> String {
        hexString(hash(bytes))
    }

    /// Lowercase hex of bytes.
    public static func hexString(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private mutating func compress(_ block: UnsafeBufferPointer<UInt8>, at offset: Int) {
        // The message schedule lives on the stack and the constants are read through a pointer: no
        // allocation and no bounds checks per block (the caller guarantees 64 bytes from `offset`).
        var (a, b, c, d, e, f, g, h) = state
        // Both callers pass a whole 64-byte block: the buffered block, or one inside the input.
        guard let start = block.baseAddress, offset + 64 <= block.count else { preconditionFailure("SHA256.compress needs a whole block") }
        let words = UnsafeRawPointer(start + offset)
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            Self.roundConstants.withUnsafeBufferPointer { constants in
                for index in 0..<16 {
                    w[index] = UInt32(bigEndian: words.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
                }
                for index in 16..<64 {
                    let s0 = w[index - 15].rotatedRight(7) ^ w[index - 15].rotatedRight(18) ^ (w[index - 15] >> 3)
                    let s1 = w[index - 2].rotatedRight(17) ^ w[index - 2].rotatedRight(19) ^ (w[index - 2] >> 10)
                    w[index] = w[index - 16] &+ s0 &+ w[index - 7] &+ s1
                }
                for index in 0..<64 {
                    let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                    let choice = (e & f) ^ (~e & g)
                    let temp1 = h &+ s1 &+ choice &+ constants[index] &+ w[index]
                    let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    let temp2 = s0 &+ majority
                    h = g
                    g = f
                    f = e
                    e = d &+ temp1
                    d = c
                    c = b
                    b = a
                    a = temp1 &+ temp2
                }
            }
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
    }
}

extension UInt32 {
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 {
        (self >> count) | (self << (32 - count))
    }
}
