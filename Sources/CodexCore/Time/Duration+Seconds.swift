extension Duration {
    /// The duration in seconds as a `Double` (attosecond precision folded in), for rates, logs and
    /// APIs that take a `TimeInterval`.
    package var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
