/// How memory text is split into tokens, and how tokens become an FTS5 query. User text never reaches
/// FTS5 as syntax: every token is quoted as an FTS5 string, so quotes, `*`, `NEAR`, `AND`, `OR`, `NOT`,
/// column filters such as `summary:` and parentheses are only data.
public enum MemoryText {
    /// The distinct tokens of `text`, in order: maximal runs of letters and digits, normalized
    /// (``normalized(_:)``).
    ///
    /// ```swift
    /// MemoryText.tokens(#"Tuesday's "delivery" OR summary:*"#)  // ["tuesday", "s", "delivery", "or", "summary"]
    /// ```
    public static func tokens(_ text: String) -> [String] {
        var result: [String] = []
        var seen = Set<String>()
        forEachToken(in: text) { token in
            if seen.insert(token).inserted { result.append(token) }
            return true
        }
        return result
    }

    /// Every token of `text`, repeats included (for term frequencies).
    public static func allTokens(_ text: String) -> [String] {
        var result: [String] = []
        forEachToken(in: text) { token in
            result.append(token)
            return true
        }
        return result
    }

    /// The number of distinct tokens of `text`, counting no further than `limit + 1`.
    public static func tokenCount(_ text: String, stoppingAfter limit: Int) -> Int {
        var seen = Set<String>()
        forEachToken(in: text) { token in
            seen.insert(token)
            return seen.count <= limit
        }
        return seen.count
    }

    /// `token` as an FTS5 string: in double quotes, each double quote doubled.
    public static func quoted(_ token: String) -> String {
        "\"" + token.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// An FTS5 query matching any (`all == false`) or every token, each quoted; `nil` without tokens.
    public static func ftsQuery(_ tokens: [String], all: Bool) -> String? {
        guard !tokens.isEmpty else { return nil }
        return tokens.map(quoted).joined(separator: all ? " AND " : " OR ")
    }

    /// `text` as the full-text index stores it: its tokens (repeats included, normalized as
    /// ``normalized(_:)`` says) separated by spaces. Records are indexed in this form and queries are
    /// made of the same tokens, so the index's own tokenizer and case folding never decide a match.
    public static func indexText(_ text: String) -> String {
        allTokens(text).joined(separator: " ")
    }

    /// One token in the form records and queries share: lowercased, with the dot that lowercasing
    /// `İ` (U+0130) leaves after an `i` removed, so `İstanbul`, `ISTANBUL` and `istanbul` are one token,
    /// and a final sigma `ς` written as `σ`, so `ΟΔΟΣ` and `οδος` are too.
    public static func normalized(_ token: String) -> String {
        let lowered = token.lowercased()
        guard lowered.unicodeScalars.contains(where: { $0 == "\u{0307}" || $0 == "ς" }) else { return lowered }
        var result = String.UnicodeScalarView()
        var previous: Unicode.Scalar?
        for scalar in lowered.unicodeScalars {
            if scalar == "\u{0307}", previous == "i" { continue }
            result.append(scalar == "ς" ? "σ" : scalar)
            previous = scalar
        }
        return String(result)
    }

    /// Calls `body` with each normalized token until it returns `false`.
    private static func forEachToken(in text: String, _ body: (String) -> Bool) {
        var current = ""
        for character in text {
            if character.isLetter || character.isNumber {
                current.append(character)
            } else if !current.isEmpty {
                guard body(normalized(current)) else { return }
                current = ""
            }
        }
        if !current.isEmpty { _ = body(normalized(current)) }
    }
}

extension String {
    /// Replaces every `target` with `replacement` (no Foundation needed).
    fileprivate func replacingOccurrences(of target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
