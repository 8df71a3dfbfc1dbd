/// A file path's parent and last component, worked out on its bytes.
///
/// `NSString`'s path methods trap on some inputs on Linux (a one-character path such as `a`), and a
/// path is user input: these never trap. Both ignore trailing slashes, as `NSString`'s do.
package enum FilePathText {
    /// The directory part of `path`: `""` when it has none (`db.sqlite`), `/` for a file at the root,
    /// `a/b` for `a/b/c` (repeated slashes before the last component dropped).
    package static func parent(of path: String) -> String {
        let bytes = Array(path.utf8)
        var end = bytes.count
        while end > 1, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        guard let slash = bytes[..<end].lastIndex(of: UInt8(ascii: "/")) else { return "" }
        var cut = slash
        while cut > 0, bytes[cut - 1] == UInt8(ascii: "/") { cut -= 1 }
        return cut == 0 ? "/" : String(decoding: bytes[..<cut], as: UTF8.self)
    }

    /// The last component of `path` (`c` for `a/b/c` and `a/b/c/`); `/` for the root, `""` for `""`.
    package static func lastComponent(of path: String) -> String {
        let bytes = Array(path.utf8)
        var end = bytes.count
        while end > 1, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        guard end > 0 else { return "" }
        if end == 1, bytes[0] == UInt8(ascii: "/") { return "/" }
        let start = bytes[..<end].lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}
