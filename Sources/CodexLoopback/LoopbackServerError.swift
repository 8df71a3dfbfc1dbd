/// Why the loopback server could not start.
public enum LoopbackServerError: Error, Sendable, Equatable {
    /// A socket call failed; `errno` is the C error number it reported.
    case systemCallFailed(call: String, errno: Int32)
}
