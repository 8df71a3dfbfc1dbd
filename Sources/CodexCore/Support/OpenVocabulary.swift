/// A value from an open vocabulary: known values are static members, unknown ones keep their raw
/// string. Encoded as a plain JSON string (the standard library's `RawRepresentable` coding).
public protocol OpenVocabulary: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible where RawValue == String {
    /// Wraps a raw value, known or not.
    init(rawValue: String)
}

extension OpenVocabulary {
    /// The raw value.
    public var description: String { rawValue }
}
