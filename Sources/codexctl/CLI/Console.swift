import CodexSchema
import Foundation
import CodexCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard output and error for the CLI, and the exit statuses it uses.
enum Console {
    /// Exit statuses: 0 success, 1 failure (or "invalid"), 2 unreadable input, 3 a validator that gave up
    /// (its work limit), 64 usage error.
    enum Status {
        static let success: Int32 = 0
        static let failure: Int32 = 1
        static let unreadableInput: Int32 = 2
        static let gaveUp: Int32 = 3
        static let usage: Int32 = 64
        /// Ended by Ctrl-C (128 + SIGINT).
        static let interrupted: Int32 = 130
    }

    /// Writes human output to standard output, made safe for a terminal by ``displayText(_:)`` (line
    /// breaks and tabs kept); see ``ConsoleOutput`` for what a failed write does.
    static func out(_ text: String) {
        ConsoleOutput.standardOutput(displayText(text).utf8)
    }

    /// ``out(_:)`` and a line break.
    static func line(_ text: String = "") {
        out(text + "\n")
    }

    /// Writes `text` and a line break exactly as they are: for machine output (`--json` lines), which
    /// must stay byte-exact. JSON text carries no C0 control character (the serializer escapes them).
    static func exactLine(_ text: String) {
        ConsoleOutput.standardOutput((text + "\n").utf8)
    }

    /// Writes JSON text as human output: every character ``display(_:)`` would escape (C1 controls,
    /// DEL, bidirectional overrides, line separators; C0 controls are already escaped by the serializer)
    /// becomes a JSON `\uXXXX` escape, so the text is still the same JSON value and cannot act on a
    /// terminal.
    static func jsonLine(_ text: String) {
        ConsoleOutput.standardOutput((terminalSafeJSON(text) + "\n").utf8)
    }

    /// `text` with every unsafe character written as a JSON `\uXXXX` escape (the same JSON value).
    static func terminalSafeJSON(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var shown = ""
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar), scalar.value <= 0xFFFF else {
                shown.unicodeScalars.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16)
            shown += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }
        return shown
    }

    /// Writes to standard error, with control characters in `text` made visible (error messages can
    /// carry what a server or a file said); the final newline is kept.
    static func error(_ text: String) {
        let body = text.hasSuffix("\n") ? String(text.dropLast()) : text
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false).map { display(String($0)) }
        ConsoleOutput.standardError((lines.joined(separator: "\n") + (text.hasSuffix("\n") ? "\n" : "")).utf8)
    }

    /// Prints `Error: message` and the usage line to standard error; returns the usage status.
    static func usageFailure(_ message: String, help: CommandHelp) -> Int32 {
        if asksForJSON, !help.subcommands.isEmpty || help.options.contains(where: { $0.name == "--json" }) {
            // A script that asked for JSON gets JSON for this failure too: the shape of every other error
            // (a mistyped subcommand included). A command without `--json` has no JSON to give: its
            // `--json` is the mistake, said in text.
            exactLine(JSONValue.object(["error": ["code": "usage", "message": .string(message), "usage": .string(help.usage)]]).compactString())
            return Status.usage
        }
        error("Error: \(message)\nUsage: \(help.usage)\n  See 'codexctl help' for more information.\n")
        return Status.usage
    }

    /// Whether the command line has `--json` among its options (before any `--`).
    static var asksForJSON: Bool {
        CommandLine.arguments.dropFirst().prefix { $0 != "--" }.contains("--json")
    }

    /// Text from stored or received data made safe for a terminal: C0 and C1 control characters, DEL
    /// and the bidirectional-override characters become visible escapes (`\n`, `\t`, `\u{1B}`, …), so
    /// a thread title or an error body cannot move the cursor, recolour, clear the screen or reorder
    /// what is shown. JSON output is never passed through this (it stays exact).
    static func display(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var shown = ""
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar) else {
                shown.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": shown += "\\n"
            case "\r": shown += "\\r"
            case "\t": shown += "\\t"
            default: shown += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return shown
    }

    /// Multi-line text (a reply, an export) made safe for a terminal: as ``display(_:)``, except that
    /// line breaks (`\n`) and tabs stay as they are. A carriage return is escaped (it moves the cursor
    /// back over what was shown).
    static func displayText(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { isUnsafe($0) && $0 != "\n" && $0 != "\t" }) else { return text }
        var shown = ""
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\t" {
                shown.unicodeScalars.append(scalar)
            } else {
                shown += display(String(scalar))
            }
        }
        return shown
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        // Bidirectional embeddings, overrides and isolates; line and paragraph separators.
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C, 0x2028, 0x2029: return true
        default: return false
        }
    }

    /// Reads a file, or standard input for `-`, refusing more than `limit` bytes: a regular file larger
    /// than the limit is refused before it is read, and a pipe is read only up to the limit, so memory
    /// follows the limit, not the input.
    /// - Throws: ``CodexCore/BoundedInputFile/Failure`` (`.tooLarge` past the limit, or the system's cause).
    static func readInput(_ path: String, limit: Int) throws(BoundedInputFile.Failure) -> [UInt8] {
        try BoundedInputFile.readAll(path, limit: limit)
    }
}
