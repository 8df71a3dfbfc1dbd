/// Byte-level ASCII helpers for reading HTTP heads, which are bytes, not text.
enum ASCII {
    /// `byte` with an uppercase ASCII letter made lowercase; every other byte as it is.
    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}
