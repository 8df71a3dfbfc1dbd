/// Redacts well-known secret shapes from content before it becomes a span attribute: OpenAI-style
/// keys (`sk-…`), bearer tokens, JSON Web Tokens, AWS access key IDs and `password=`/`api_key=` style
/// assignments. Known secrets are redacted before this by ``SecretRedactor``.
enum TelemetryContentScrubber {
    private static var patterns: [Regex<Substring>] { [
        /sk-[A-Za-z0-9_\-]{16,}/,
        /(?i:bearer)\s+[A-Za-z0-9._~+\/\-]{12,}=*/,
        /eyJ[A-Za-z0-9_\-]{6,}\.eyJ[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]*/,
        /AKIA[0-9A-Z]{16}/,
        /(?i:api[_-]?key|secret|password|passwd|token)\s*[=:]\s*[^\s"',;&]{6,}/,
    ] }

    /// `text` with every match replaced by ``SecretRedactor/replacement``.
    static func scrub(_ text: String) -> String {
        var result = text
        for pattern in patterns where result.contains(pattern) {
            result = result.replacing(pattern, with: SecretRedactor.replacement)
        }
        return result
    }
}
