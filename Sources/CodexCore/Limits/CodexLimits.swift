/// The size limits several modules enforce, each defined once here.
public enum CodexLimits {
    /// The largest structured-output payload a turn or a recovery operation accepts: 4 MiB of JSON text.
    /// Past it the stream fails with `structured_output_too_large` instead of growing.
    public static let maximumStructuredPayloadBytes = 4 * 1024 * 1024

    /// The largest single server-sent event the Responses stream accepts by default: 70 MiB, the base64
    /// form of a 50 MiB item (a generated image) plus 4 MiB of JSON around it.
    public static let maximumEventBytes = 70 * 1024 * 1024
}
