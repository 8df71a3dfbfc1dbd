import CodexCore
import Testing

/// FIPS 180-4 / NIST CAVP example vectors.
@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func matchesTheNISTVectors(message: String, digest: String) {
        #expect(SHA256.hexDigest(of: Array(message.utf8)) == digest)
    }

    @Test func hashesAMillionAs() {
        var hasher = SHA256()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000)
        for _ in 0..<1_000 { hasher.update(chunk) }
        #expect(SHA256.hexString(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(SHA256.hexDigest(of: [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func incrementalUpdatesAtEverySplitPointMatchOneShot() {
        let message = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let expected = SHA256.hash(message)
        #expect(expected.count == 32)
        for split in 0...message.count {
            var hasher = SHA256()
            hasher.update(message[..<split])
            hasher.update(message[split...])
            #expect(hasher.finalize() == expected)
        }
    }

    @Test(arguments: [55, 56, 57, 63, 64, 65, 119, 120])
    func paddingBoundariesAgreeWithByteAtATime(length: Int) {
        let message = [UInt8](repeating: 0x61, count: length)
        var hasher = SHA256()
        for byte in message { hasher.update([byte]) }
        #expect(hasher.finalize() == SHA256.hash(message))
    }
}
