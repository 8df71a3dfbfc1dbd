import CodexCore
import Testing

/// A path's parent and last component, including the one-character paths Foundation's `NSString`
/// methods trap on.
@Suite struct FilePathTextTests {
    @Test(arguments: [
        ("", "", ""), ("a", "", "a"), ("é", "", "é"), ("ab", "", "ab"), ("a/b", "a", "b"), ("a/b/", "a", "b"),
        ("/a", "/", "a"), ("/", "/", "/"), ("//", "/", "/"), ("a//b", "a", "b"), ("/x/y/z.sqlite", "/x/y", "z.sqlite"),
        ("./q", ".", "q"), ("../q", "..", "q"), ("a/", "", "a"), ("ü/ß", "ü", "ß"),
    ])
    func partsOfAPath(_ path: String, _ parent: String, _ last: String) {
        #expect(FilePathText.parent(of: path) == parent)
        #expect(FilePathText.lastComponent(of: path) == last)
    }
}
