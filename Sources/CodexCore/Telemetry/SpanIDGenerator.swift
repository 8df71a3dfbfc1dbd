import Synchronization

/// Trace and span IDs: SplitMix64 over one atomic counter seeded once from the system's random source.
/// Lock-free and a few nanoseconds per ID (the system source is a system call per 8 bytes); every
/// 64-bit output of a process is distinct, because SplitMix64's mixing is a bijection of the counter.
/// IDs need to be unique and unpredictable enough not to collide across processes, not secret.
enum SpanIDGenerator {
    private static let golden: UInt64 = 0x9E37_79B9_7F4A_7C15
    private static let state = Atomic<UInt64>(UInt64.random(in: .min ... .max))

    /// The next 64 random-looking bits, never zero.
    static func next() -> UInt64 {
        while true {
            var value = state.wrappingAdd(golden, ordering: .relaxed).newValue
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            value ^= value >> 31
            if value != 0 { return value }
        }
    }
}
