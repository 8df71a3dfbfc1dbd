import CodexCore
import CodexTestSupport
import Testing

/// The memory store suite against the in-memory store, plus the tokenizer and FTS5 quoting.
@Suite struct InMemoryMemoryStoreTests {
    @Test func theMemorySuitePasses() async throws {
        let problems = try await MemoryStoreConformance.run { InMemoryMemoryStore() }
        #expect(problems.isEmpty, "\(problems)")
        #expect(MemoryStoreConformance.checkNames.count == 14)
    }

    @Test func tokensAreRunsOfLettersAndDigitsLowercasedAndDistinct() {
        #expect(MemoryText.tokens(#"Tuesday's "delivery" OR summary:* tuesday"#) == ["tuesday", "s", "delivery", "or", "summary"])
        #expect(MemoryText.tokens("A-1 b_2 ünï 🍎 x\u{0}y") == ["a", "1", "b", "2", "ünï", "x", "y"])
        #expect(MemoryText.tokens("*()\"^:+-") == [])
        #expect(MemoryText.tokenCount("a b c d", stoppingAfter: 2) == 3)
    }

    @Test func everyTokenIsQuotedAsAnFTS5String() {
        #expect(MemoryText.quoted("near") == #""near""#)
        #expect(MemoryText.quoted(#"a"b"#) == #""a""b""#)
        #expect(MemoryText.ftsQuery(MemoryText.tokens("NEAR(summary: x) OR y*"), all: false) == #""near" OR "summary" OR "x" OR "or" OR "y""#)
        #expect(MemoryText.ftsQuery(["a", "b"], all: true) == #""a" AND "b""#)
        #expect(MemoryText.ftsQuery([], all: true) == nil)
    }

    @Test func atLeastMoreTokensThanTheTextHasMeansAll() {
        #expect(MemoryQuery(text: "a b", match: .atLeast(5)).requiredMatches == 2)
        #expect(MemoryQuery(text: "a b c", match: .anyToken).requiredMatches == 1)
        #expect(MemoryQuery(text: "*", match: .allTokens).requiredMatches == 0)
    }
}
