import CodexCore
import CodexSchema
import CodexTransport
import Foundation

/// `codexctl responses`: tools for captured Responses streams.
enum ResponsesCommand: CLICommand {
    static let name = "responses"
    static let summary = "Decode captured Responses API streams."
    static let help = CommandHelp(
        command: "responses",
        overview: "Work with captured Responses API streams.",
        subcommands: subcommandRows
    )
    static var subcommands: [any CLICommand.Type] { [ResponsesDecodeCommand.self] }

    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }
}

/// `codexctl responses decode FILE|-`.
enum ResponsesDecodeCommand: CLICommand {
    static let name = "decode"
    static let summary = "Decode a captured SSE stream into one JSON line per typed event."
    static let help = CommandHelp(
        command: "responses decode",
        overview: """
        Decode a captured SSE stream with CodexKit's framer and event decoder. Prints one JSON line per typed event \
        ({"type": …, "sequence_number": …, …}; unknown events as {"type": "unknown", "raw_type": …}) and a final summary \
        line, also when an error stops the decoding (the events before it are printed first). Exit status: 0 when \
        the stream ends with response.completed, 1 on a framing or JSON error (with the byte offset; one event may \
        hold up to 70 MiB, the live client's limit), 2 when the stream ends without response.completed or cannot \
        be read, 64 usage error.
        """,
        arguments: [("<file>", "The captured stream, or - for standard input.")]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        guard !printsHelp(arguments) else { return Console.Status.success }
        guard let parsed = parse(arguments) else { return Console.Status.usage }
        guard parsed.positionals.count == 1 else {
            return Console.usageFailure(parsed.positionals.isEmpty ? "Missing expected argument '<file>'" : "Too many arguments", help: help)
        }
        // The input streams through the framer in 64 KiB reads: memory follows the event limit, not the
        // input (a huge line fails at the limit, having held at most the limit).
        let input: BoundedInputFile
        do {
            input = try BoundedInputFile(parsed.positionals[0])
        } catch {
            Console.error("Error: unreadable_input: Cannot read '\(parsed.positionals[0])': \(BoundedInputFile.Failure.reason(error.systemError))\n")
            return Console.Status.unreadableInput
        }
        defer { input.close() }
        // The live client's limit on one event (an image arrives as one base64 event), so a stream the
        // client accepted decodes here too.
        var framer = SSEFramer(maximumEventBytes: CodexLimits.maximumEventBytes)
        var decoder = ResponsesEventDecoder()
        var sseEvents: [SSEEvent] = []
        var count = 0
        var terminal: String?
        var responseID: String?
        var textCharacters = 0
        var totalBytes = 0
        // The first framing or decoding error, in stream order; the events before it are printed, then
        // the summary, then the error.
        var failure: AgentRuntimeError?
        var readFailure: BoundedInputFile.Failure?
        reading: while failure == nil {
            let chunk: [UInt8]
            do {
                chunk = try input.read(maximum: 64 * 1024)
            } catch {
                readFailure = error
                break
            }
            if chunk.isEmpty { break }
            totalBytes += chunk.count
            // Events framed before a framing error in this chunk are kept and decoded first.
            do { try framer.feed(chunk, into: &sseEvents) } catch { failure = error }
            defer { sseEvents.removeAll(keepingCapacity: true) }
            for sseEvent in sseEvents {
                let decoded: ResponsesStreamEvent?
                do {
                    decoded = try decoder.decode(sseEvent)
                } catch {
                    failure = error
                    break reading
                }
                guard let event = decoded else { continue }
                count += 1
                Console.exactLine(EventJSON.line(for: event).compactString())
                switch event.kind {
                case .outputTextDelta(_, _, _, let delta): textCharacters += delta.count
                case .created(let info): responseID = info.id ?? responseID
                case .completed(let info), .failed(let info), .incomplete(let info):
                    responseID = info.id ?? responseID
                    terminal = event.typeName
                default: break
                }
            }
        }
        let summary: JSONObject = [
            "type": "summary", "events": .number(JSONNumber(count)), "dropped_duplicates": .number(JSONNumber(decoder.droppedDuplicates)),
            "terminal": terminal.map(JSONValue.string) ?? .null, "response_id": responseID.map(JSONValue.string) ?? .null,
            "output_text_characters": .number(JSONNumber(textCharacters)), "bytes": .number(JSONNumber(totalBytes)),
        ]
        Console.exactLine(JSONValue.object(summary).compactString())
        if let readFailure {
            Console.error("Error: unreadable_input: Cannot read '\(parsed.positionals[0])' at byte \(totalBytes): \(BoundedInputFile.Failure.reason(readFailure.systemError))\n")
            return Console.Status.unreadableInput
        }
        if let failure {
            Console.error("Error: \(failure.code.rawValue): \(failure.message) (at byte \(failure.byteOffset ?? framer.byteCount))\n")
            return Console.Status.failure
        }
        if terminal == "response.completed" { return Console.Status.success }
        if let terminal {
            Console.error("Error: response_not_completed: the stream ended with \(terminal), not response.completed\n")
        } else {
            Console.error("Error: turn_summary_missing: the stream ended without response.completed\n")
        }
        return Console.Status.unreadableInput
    }
}

/// The JSON line printed for one event.
enum EventJSON {
    static func line(for event: ResponsesStreamEvent) -> JSONValue {
        var object: JSONObject = [:]
        if case .unknown(let type, _) = event.kind {
            object["type"] = "unknown"
            object["raw_type"] = .string(type)
        } else {
            object["type"] = .string(event.typeName)
        }
        object["sequence_number"] = event.sequenceNumber.map { .number(JSONNumber($0)) } ?? .null
        switch event.kind {
        case .outputTextDelta(let item, let output, _, let delta), .reasoningSummaryTextDelta(let item, let output, _, let delta),
             .reasoningTextDelta(let item, let output, _, let delta), .functionCallArgumentsDelta(let item, let output, let delta),
             .refusalDelta(let item, let output, let delta):
            object["item_id"] = .string(item)
            object["output_index"] = .number(JSONNumber(output))
            object["delta"] = .string(delta)
        case .outputItemAdded(let output, let item), .outputItemDone(let output, let item):
            object["output_index"] = .number(JSONNumber(output))
            object["item"] = itemJSON(item)
        case .created(let info), .inProgress(let info), .queued(let info), .completed(let info), .failed(let info), .incomplete(let info):
            object["response_id"] = info.id.map(JSONValue.string) ?? .null
            if let code = info.errorCode { object["error_code"] = .string(code) }
            if let reason = info.incompleteReason { object["incomplete_reason"] = .string(reason) }
            if let usage = info.usage {
                object["usage"] = [
                    "input_tokens": usage.inputTokens.map { .number(JSONNumber($0)) } ?? .null,
                    "output_tokens": usage.outputTokens.map { .number(JSONNumber($0)) } ?? .null,
                    "total_tokens": usage.totalTokens.map { .number(JSONNumber($0)) } ?? .null,
                ]
            }
        case .error(let code, let type, _, _):
            object["code"] = code.map(JSONValue.string) ?? .null
            object["error_type"] = type.map(JSONValue.string) ?? .null
        case .rateLimits(let snapshots):
            object["limits"] = .array(snapshots.map { ["limit_id": .string($0.limitID), "primary_used_percent": $0.primary.flatMap { JSONNumber($0.usedPercent) }.map(JSONValue.number) ?? .null] })
        case .webSearchCall(let item, _, let status), .imageGenerationCall(let item, _, let status, _):
            object["item_id"] = .string(item)
            object["status"] = .string(status)
        case .functionCallArgumentsDone(let item, _, let arguments):
            object["item_id"] = .string(item)
            object["arguments"] = .string(arguments)
        default:
            break
        }
        return .object(object)
    }

    static func itemJSON(_ item: ResponsesOutputItem) -> JSONValue {
        switch item {
        case .message(let message):
            return ["type": "message", "id": .string(message.id), "phase": message.phase.map { .string($0.wireName) } ?? .null, "text": .string(message.text)]
        case .functionCall(let call):
            return ["type": "function_call", "id": .string(call.id), "call_id": .string(call.callID), "name": .string(call.name), "arguments": .string(call.arguments)]
        case .reasoning(let reasoning):
            return ["type": "reasoning", "id": .string(reasoning.id), "summary": .array(reasoning.summary.map(JSONValue.string)),
                    "has_encrypted_content": .bool(reasoning.encryptedContent != nil)]
        case .webSearchCall(let id, let status, _):
            return ["type": "web_search_call", "id": .string(id), "status": status.map(JSONValue.string) ?? .null]
        case .imageGenerationCall(let image):
            return ["type": "image_generation_call", "id": .string(image.id), "status": image.status.map(JSONValue.string) ?? .null,
                    "result_bytes": .number(JSONNumber(image.resultBase64?.utf8.count ?? 0))]
        case .customToolCall(let id, let callID, let name, _):
            return ["type": "custom_tool_call", "id": .string(id), "call_id": .string(callID), "name": .string(name)]
        case .unknown(let type, _):
            return ["type": "unknown", "raw_type": .string(type)]
        }
    }
}
