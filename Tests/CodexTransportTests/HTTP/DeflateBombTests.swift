import CodexTestSupport
import Foundation
import Testing

/// The DEFLATE bombs the hostile-server tests send inflate, through an inflater that is not ours
/// (Python's `zlib`), to exactly the zero bytes they promise, whatever the number of copies: the
/// repeated thirteen-byte groups join up with the bits written one by one around them.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct DeflateBombTests {
    @Test func everyBombInflatesToExactlyItsSizeInZeroBytes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("deflate-bomb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Copies of 258 bytes: none, fewer than two groups of eight, group boundaries, and 256 MiB.
        let copies = [0, 1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 1_000, (256 * 1024 * 1024 - 1) / 258]
        for count in copies {
            try Data(DeflateBomb.deflate(inflatedSize: 1 + 258 * count)).write(to: directory.appendingPathComponent("\(count)"))
        }
        let script = """
            import sys, zlib
            for name in sys.argv[2:]:
                inflater = zlib.decompressobj(-15)
                data = inflater.decompress(open(sys.argv[1] + "/" + name, "rb").read())
                print(name, len(data), data.count(0), inflater.eof, len(inflater.unused_data))
            """
        let outcome = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, directory.path] + copies.map(String.init)
        )
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let expected = copies.map { count in "\(count) \(1 + 258 * count) \(1 + 258 * count) True 0\n" }.joined()
        #expect(outcome.stdout == expected)
        // About 1 : 1,270: thirteen bits per copy.
        let bits = 3 + 8 + 13 * 1_000_000 + 7
        #expect(DeflateBomb.deflate(inflatedSize: 1 + 258 * 1_000_000).count == (bits + 7) / 8)
    }
}
