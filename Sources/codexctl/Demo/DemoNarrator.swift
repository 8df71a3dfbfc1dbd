import CodexSchema
import Foundation
import Synchronization

/// What `codexctl demo` says: indented text for a person, or with `--json` one JSON object per line
/// (`{"type": "step", "step": 1, "title": …}` to open a step, then `{"type": <kind>, "step": 1, "text": …,
/// …fields}` for each thing it shows).
final class DemoNarrator: Sendable {
    let json: Bool
    private let state = Mutex<(step: Int, speaking: Bool)>((0, false))

    init(json: Bool) { self.json = json }

    /// Opens step `number`.
    func step(_ number: Int, _ title: String) {
        endSpeech()
        state.withLock { $0.step = number }
        if json {
            emit(["type": "step", "step": .number(JSONNumber(number)), "title": .string(title)])
        } else {
            Console.line("\n\(number). \(title)")
        }
    }

    /// One thing the current step shows: `text` for a person, `kind` and `fields` (with the text) for a
    /// script.
    func say(_ kind: String, _ text: String, _ fields: JSONObject = [:]) {
        endSpeech()
        if json {
            var object: JSONObject = ["type": .string(kind), "step": .number(JSONNumber(state.withLock { $0.step })), "text": .string(text)]
            for member in fields { object[member.key] = member.value }
            emit(object)
        } else {
            Console.line("   " + Console.display(text))
        }
    }

    /// Streamed text as it arrives (text mode only; a script gets the committed message instead).
    func stream(_ label: String, _ delta: String) {
        guard !json else { return }
        let first = state.withLock { state -> Bool in
            defer { state.speaking = true }
            return !state.speaking
        }
        Console.out((first ? "   \(label): " : "") + Console.display(delta))
    }

    /// Ends a line of streamed text.
    func endSpeech() {
        if state.withLock({ state -> Bool in
            defer { state.speaking = false }
            return state.speaking
        }) {
            Console.out("\n")
        }
    }

    /// A line before the first step or after the last one (after a blank line with `spaced`).
    func note(_ kind: String, _ text: String, spaced: Bool = false, _ fields: JSONObject = [:]) {
        endSpeech()
        if json {
            var object: JSONObject = ["type": .string(kind), "text": .string(text)]
            for member in fields { object[member.key] = member.value }
            emit(object)
        } else {
            Console.line((spaced ? "\n" : "") + Console.display(text))
        }
    }

    /// A heading line and indented lines under it (after a blank line), or one JSON object with them.
    func list(_ kind: String, _ heading: String, _ lines: [String], _ fields: JSONObject = [:]) {
        endSpeech()
        if json {
            var object: JSONObject = ["type": .string(kind), "text": .string(heading), "lines": .array(lines.map { .string($0) })]
            for member in fields { object[member.key] = member.value }
            emit(object)
        } else {
            Console.line("\n" + Console.display(heading))
            for line in lines { Console.line("  " + Console.display(line)) }
        }
    }

    private func emit(_ object: JSONObject) {
        Console.exactLine(JSONValue.object(object).compactString())
    }
}
