/// Finds what a server echoed back of a secret (an API key, a bearer or refresh token), in whatever form
/// it took, and replaces it with `<redacted>`.
///
/// A piece of text is redacted where it holds a run of at least ``minimumRun`` consecutive characters of
/// one of a secret's forms, compared without regard to ASCII case:
/// - the secret itself;
/// - its standard base64 and its base64url encoding, at each of the three byte alignments a substring
///   of the secret can start at (so part of a key inside an encoded blob is found too);
/// - its URL encoding (every byte outside the unreserved set as `%XX`), and every byte as `%XX`.
///
/// Whitespace inside a candidate run is ignored (`s k - p r o j …` is the key spaced out), and every
/// run is found on its own, so a key the server split with other text between its halves loses both
/// halves that are long enough. A secret shorter than ``minimumRun`` (but at least 8 characters) is
/// redacted where it appears whole. Shorter ones are ignored: they would match ordinary text.
///
/// ```swift
/// let redactor = SecretRedactor(secrets: ["sk-proj-abcdefghijklmnopqrstuvwxyz"])
/// redactor.redact("bad key SK-PROJ-ABCDEFGHIJKLMNOP") // "bad key <redacted>"
/// ```
public struct SecretRedactor: Sendable {
    /// The shortest run of a secret's form that is redacted: 12 characters.
    public static let minimumRun = 12
    /// The text that replaces each redacted run.
    public static let replacement = "<redacted>"

    /// Every `minimumRun`-byte window of every long secret's forms, lowercased.
    private let windows: Set<Window>
    /// Secrets of 8 to 11 characters, lowercased: matched whole.
    private let shortSecrets: [[UInt8]]

    /// A redactor for `secrets`; empty strings and secrets under 8 characters are ignored.
    public init(secrets: [String]) {
        var windows = Set<Window>()
        var shortSecrets: [[UInt8]] = []
        for secret in secrets {
            let bytes = Array(secret.utf8)
            if bytes.count < 8 { continue }
            if bytes.count < Self.minimumRun {
                shortSecrets.append(bytes.map(Self.lowercased))
                continue
            }
            for form in Self.forms(of: bytes) where form.count >= Self.minimumRun {
                let lowered = form.map(Self.lowercased)
                for start in 0...(lowered.count - Self.minimumRun) {
                    windows.insert(Window(lowered[start..<(start + Self.minimumRun)]))
                }
            }
        }
        self.windows = windows
        self.shortSecrets = shortSecrets
    }

    /// Whether there is nothing to redact.
    public var isEmpty: Bool { windows.isEmpty && shortSecrets.isEmpty }

    /// `text` with every run of a secret's forms replaced by ``replacement``.
    public func redact(_ text: String) -> String {
        guard !isEmpty else { return text }
        let bytes = Array(text.utf8)
        var ranges = longRuns(in: bytes)
        ranges += shortRuns(in: bytes)
        guard !ranges.isEmpty else { return text }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var position = 0
        for range in ranges where range.upperBound > position {
            // An overlapping run extends the one already replaced.
            if range.lowerBound >= position {
                output += bytes[position..<range.lowerBound]
                output += Self.replacement.utf8
            }
            position = range.upperBound
        }
        output += bytes[position...]
        // Runs start and end on ASCII bytes, so the bytes left are whole UTF-8 sequences.
        return String(decoding: output, as: UTF8.self)
    }

    /// `text` redacted, or `nil` for `nil`.
    func redact(ifPresent text: String?) -> String? {
        text.map { redact($0) }
    }

    // MARK: - Finding runs

    /// The byte ranges of `bytes` covered by windows of long secrets, whitespace skipped inside them.
    private func longRuns(in bytes: [UInt8]) -> [Range<Int>] {
        guard !windows.isEmpty else { return [] }
        // The text without whitespace, and where each byte kept came from.
        var kept: [UInt8] = []
        var origins: [Int] = []
        kept.reserveCapacity(bytes.count)
        origins.reserveCapacity(bytes.count)
        for (offset, byte) in bytes.enumerated() where !Self.isWhitespace(byte) {
            kept.append(Self.lowercased(byte))
            origins.append(offset)
        }
        guard kept.count >= Self.minimumRun else { return [] }
        var ranges: [Range<Int>] = []
        var covered: Range<Int>?
        for start in 0...(kept.count - Self.minimumRun) where windows.contains(Window(kept[start..<(start + Self.minimumRun)])) {
            let end = start + Self.minimumRun
            if let current = covered, start <= current.upperBound {
                covered = current.lowerBound..<end
            } else {
                if let current = covered { ranges.append(origins[current.lowerBound]..<(origins[current.upperBound - 1] + 1)) }
                covered = start..<end
            }
        }
        if let current = covered { ranges.append(origins[current.lowerBound]..<(origins[current.upperBound - 1] + 1)) }
        return ranges
    }

    /// The byte ranges of `bytes` that are a short secret, whole (case-insensitive).
    private func shortRuns(in bytes: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        let lowered = bytes.map(Self.lowercased)
        for secret in shortSecrets where lowered.count >= secret.count {
            var start = 0
            while start <= lowered.count - secret.count {
                if lowered[start..<(start + secret.count)].elementsEqual(secret) {
                    ranges.append(start..<(start + secret.count))
                    start += secret.count
                } else {
                    start += 1
                }
            }
        }
        return ranges
    }

    // MARK: - Forms of a secret

    /// The texts a secret can be echoed as.
    static func forms(of secret: [UInt8]) -> [[UInt8]] {
        var forms = [secret, percentEncoded(secret, everyByte: false), percentEncoded(secret, everyByte: true)]
        for alignment in 0..<3 where secret.count > alignment {
            let tail = Array(secret[alignment...])
            // A run inside a longer encoded text: the last character of an unpadded group depends on
            // the bytes after it, so it is left out.
            let determined = tail.count / 3 * 4 + tail.count % 3
            forms.append(Array(base64(tail, urlSafe: false).prefix(determined)))
            forms.append(Array(base64(tail, urlSafe: true).prefix(determined)))
        }
        return forms
    }

    private static func percentEncoded(_ bytes: [UInt8], everyByte: Bool) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        for byte in bytes {
            let unreserved = (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            if unreserved && !everyByte {
                output.append(byte)
            } else {
                output += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return output
    }

    private static func base64(_ bytes: [UInt8], urlSafe: Bool) -> [UInt8] {
        let alphabet = Array((urlSafe
            ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
            : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/").utf8)
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let first = UInt32(bytes[index])
            let second = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
            let third = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
            let group = first << 16 | second << 8 | third
            // Unpadded: one byte left gives two characters, two give three.
            let remaining = bytes.count - index
            for slot in 0..<(remaining >= 3 ? 4 : remaining + 1) { output.append(alphabet[Int(group >> (18 - 6 * UInt32(slot)) & 0x3F)]) }
            index += 3
        }
        return output
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    /// Twelve bytes as two integers, hashed without an allocation.
    private struct Window: Hashable, Sendable {
        let high: UInt64
        let low: UInt32

        init(_ bytes: ArraySlice<UInt8>) {
            var high: UInt64 = 0
            var low: UInt32 = 0
            for (offset, byte) in bytes.enumerated() {
                if offset < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt32(byte) }
            }
            self.high = high
            self.low = low
        }
    }
}
