import CodexCore
import CodexTestSupport
import Foundation
import Testing

/// Every form a server can echo a secret in is found; ordinary text is left alone.
@Suite struct SecretRedactorTests {
    static let key = "sk-proj-Q7f3a91c2e5b8d4XyZ0wVu/+Kd=="
    let redactor = SecretRedactor(secrets: [Self.key])

    static var forms: [(name: String, text: String)] { SecretForms.all(of: key) }

    @Test(arguments: Self.forms.map(\.name))
    func eachFormIsRedacted(name: String) throws {
        let form = try #require(Self.forms.first { $0.name == name })
        let redacted = redactor.redact("before [\(form.text)] after")
        #expect(redacted.hasPrefix("before ["), "\(redacted)")
        #expect(redacted.hasSuffix("] after"), "\(redacted)")
        #expect(redacted.contains(SecretRedactor.replacement), "\(name): \(redacted)")
        #expect(!SecretForms.leaks(Self.key, form: form, in: redacted), "\(name): \(redacted)")
    }

    @Test func exactReplacementsAreStable() {
        #expect(redactor.redact("key sk-proj-Q7f3a91c2e5b8d4XyZ0wVu/+Kd== refused") == "key <redacted> refused")
        #expect(redactor.redact("halves: sk-proj-Q7f3a9 | 1c2e5b8d4XyZ0wVu/+Kd==.") == "halves: <redacted> | <redacted>.")
        #expect(redactor.redact("req-SK-PROJ-Q7F3A91C2E5B8D4") == "req-<redacted>")
    }

    @Test func runsShorterThanTwelveAndOrdinaryTextAreKept() {
        #expect(redactor.redact("sk-proj-Q7f3") == "<redacted>")
        #expect(redactor.redact("sk-proj-Q7f") == "sk-proj-Q7f")
        #expect(redactor.redact("Incorrect API key provided") == "Incorrect API key provided")
        #expect(redactor.redact("İstanbul ünïcode ✓ sk-proj-") == "İstanbul ünïcode ✓ sk-proj-")
        #expect(redactor.redact("") == "")
    }

    @Test func shortSecretsAreRedactedWholeAndTinyOnesIgnored() {
        let short = SecretRedactor(secrets: ["abcdef123", "tiny"])
        #expect(short.redact("x ABCDEF123 y abcdef12") == "x <redacted> y abcdef12")
        #expect(short.redact("tiny") == "tiny")
        #expect(SecretRedactor(secrets: ["tiny", ""]).isEmpty)
    }

    @Test func multiByteTextAroundARunStaysValid() {
        let text = "é\(Self.key)é"
        #expect(redactor.redact(text) == "é<redacted>é")
    }
}
