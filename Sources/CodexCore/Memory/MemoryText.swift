/// How memory text is split into tokens, and how tokens become an FTS5 query. User text never reaches
/// FTS5 as syntax: every token is quoted as an FTS5 string, so quotes, `*`, `NEAR`, `AND`, `OR`, `NOT`,
/// column filters such as `summary:` and parentheses are only data.
public enum MemoryText {
    /// The distinct tokens of `text`, in order: maximal runs of letters and digits, lowercased.
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

    /// Calls `body` with each lowercased token until it returns `false`.
    private static func forEachToken(in text: String, _ body: (String) -> Bool) {
        var current = ""
        for character in text {
            if character.isLetter || character.isNumber {
                current.append(character)
            } else if !current.isEmpty {
                guard body(current.lowercased()) else { return }
                current = ""
            }
        }
        if !current.isEmpty { _ = body(current.lowercased()) }
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
