import Foundation

/// Standard output and error for the CLI, and the exit statuses it uses.
enum Console {
    /// Exit statuses: 0 success, 1 failure, 2 unreadable input, 64 usage error.
    enum Status {
        static let success: Int32 = 0
        static let failure: Int32 = 1
        static let unreadableInput: Int32 = 2
        static let usage: Int32 = 64
    }

    static func out(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    static func line(_ text: String = "") {
        out(text + "\n")
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Prints `Error: message` and the usage line to standard error; returns the usage status.
    static func usageFailure(_ message: String, help: CommandHelp) -> Int32 {
        error("Error: \(message)\nUsage: \(help.usage)\n  See 'codexctl help' for more information.\n")
        return Status.usage
    }

    /// Reads a file, or standard input for `-`.
    static func readInput(_ path: String) throws -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }
}
