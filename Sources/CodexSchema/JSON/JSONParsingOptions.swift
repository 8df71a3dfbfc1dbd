/// Limits for `JSONValue.init(parsing:options:)`.
///
/// The parser refuses, with a typed error, input larger than ``maximumBytes`` and arrays or objects
/// nested deeper than ``maximumDepth``. It never recurses, so no input can overflow the stack.
public struct JSONParsingOptions: Sendable, Hashable {
    /// The largest accepted nesting depth is clamped to this (values nested deeper could not be
    /// compared, hashed or released without deep recursion).
    public static let depthCeiling = 1_024

    /// The deepest nesting of arrays and objects accepted; `[[1]]` has depth 2. Default 64, clamped to
    /// 1…``depthCeiling``.
    public var maximumDepth: Int {
        didSet { maximumDepth = Self.clampDepth(maximumDepth) }
    }

    /// The largest input accepted, in bytes. Default 64 MiB; at least 1.
    public var maximumBytes: Int {
        didSet { maximumBytes = max(1, maximumBytes) }
    }

    /// Creates options.
    ///
    /// - Parameters:
    ///   - maximumDepth: Deepest nesting accepted, clamped to 1…``depthCeiling``. Default 64.
    ///   - maximumBytes: Largest input accepted in bytes. Default 64 MiB.
    public init(maximumDepth: Int = 64, maximumBytes: Int = 64 * 1024 * 1024) {
        self.maximumDepth = Self.clampDepth(maximumDepth)
        self.maximumBytes = max(1, maximumBytes)
    }

    private static func clampDepth(_ depth: Int) -> Int { min(max(depth, 1), depthCeiling) }
}
