internal import Glibc

/// The sanitizer this process was built with (`swift test --sanitize=address|thread`), detected at run time
/// from the sanitizer runtime's exported symbols. Tests that bound elapsed time or memory scale their
/// limits with it instead of failing on what the sanitizer itself costs: its slowdown, AddressSanitizer's
/// quarantine of freed memory, ThreadSanitizer's shadow memory.
public enum Sanitizer: String, Sendable {
    /// An ordinary build.
    case none
    /// AddressSanitizer (`-sanitize=address`).
    case address
    /// ThreadSanitizer (`-sanitize=thread`).
    case thread

    /// The sanitizer of this process.
    public static let active: Sanitizer = {
        if dlsym(nil, "__asan_init") != nil { return .address }
        if dlsym(nil, "__tsan_init") != nil { return .thread }
        return .none
    }()

    /// How many times longer a time limit must be under the active sanitizer: 1 for an ordinary build, 4
    /// under AddressSanitizer, 8 under ThreadSanitizer (their documented slowdowns are about 2× and 5–15×;
    /// the suite measured 3–5× and up to 15× on a loaded 2-core machine).
    public static var slowdown: Int {
        switch active {
        case .none: 1
        case .address: 4
        case .thread: 8
        }
    }

    /// The bytes the program holds allocated right now as the sanitizer's allocator counts them (freed
    /// memory in AddressSanitizer's quarantine excluded), or nil in an ordinary build, where the resident
    /// set size is the measure instead.
    public static var liveHeapBytes: Int? {
        allocatedBytesCounter?()
    }

    private typealias Counter = @convention(c) () -> Int

    /// The sanitizer runtime's counter, looked up once.
    private static let allocatedBytesCounter: Counter? = {
        guard active != .none, let symbol = dlsym(nil, "__sanitizer_get_current_allocated_bytes") else { return nil }
        return unsafeBitCast(symbol, to: Counter.self)
    }()

    /// Starts the sanitizer's symbolizer now (a child `llvm-symbolizer` on two pipes) in a sanitized
    /// build; nothing otherwise. ThreadSanitizer starts it the first time it symbolizes a stack, which it
    /// also does to match a report against the suppressions, so without this a suppressed report between
    /// two descriptor counts would read as two leaked descriptors. `ProcessResources` calls it before
    /// every descriptor count.
    public static func startSymbolizer() {
        _ = symbolizerStarted
    }

    private static let symbolizerStarted: Bool = {
        guard active != .none, let symbolize = dlsym(nil, "__sanitizer_symbolize_pc") else { return false }
        typealias Symbolize = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>, UnsafeMutablePointer<CChar>, Int) -> Void
        var text = [CChar](repeating: 0, count: 256)
        // Any address in the executable will do: the sanitizer runtime's own function.
        unsafeBitCast(symbolize, to: Symbolize.self)(symbolize, "%p %F %L", &text, text.count)
        return true
    }()

    /// The memory a leak test compares before and after: the sanitizer allocator's live bytes under a
    /// sanitizer (resident memory there grows with the quarantine and the shadow, not with leaks), the
    /// resident set size otherwise; nil where neither can be read.
    public static var leakMeasureBytes: Int? {
        liveHeapBytes ?? ProcessResources.residentBytes
    }
}
