/// Splits a command line the way a POSIX shell splits words (no expansion): spaces separate words;
/// single quotes keep everything; double quotes keep everything but `\"`, `\\`, `\$` and `` \` ``; a
/// backslash outside quotes keeps the next character.
enum ShellWords {
    /// The words of `line`.
    ///
    /// - Throws: ``UsageError`` for an unclosed quote or a trailing backslash.
    static func split(_ line: String) throws(UsageError) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var iterator = line.makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t", "\n":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case "'":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "'" {
                        closed = true
                        break
                    }
                    word.append(next)
                }
                guard closed else { throw UsageError("an unclosed single quote") }
            case "\"":
                inWord = true
                var closed = false
                while let next = iterator.next() {
                    if next == "\"" {
                        closed = true
                        break
                    }
                    if next == "\\" {
                        guard let escaped = iterator.next() else { break }
                        if !["\"", "\\", "$", "`"].contains(escaped) { word.append("\\") }
                        word.append(escaped)
                    } else {
                        word.append(next)
                    }
                }
                guard closed else { throw UsageError("an unclosed double quote") }
            case "\\":
                guard let escaped = iterator.next() else { throw UsageError("a trailing backslash") }
                inWord = true
                word.append(escaped)
            default:
                inWord = true
                word.append(character)
            }
        }
        if inWord { words.append(word) }
        return words
    }
}
