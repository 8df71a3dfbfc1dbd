/// The version of the CodexKit package.
public enum CodexKitVersion {
    /// The semantic version of this build, e.g. `0.1.0`.
    public static let current = "0.1.0"
}
