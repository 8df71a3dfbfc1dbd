import CodexCore
import CodexSchema
import CodexTransport
import Foundation

/// Thrown inside a transmission when a lifecycle command asks the owner to stop.
struct RecoveryLifecycleStop: Error {
    let command: RecoveryControlRecord.Command
}

extension AgentStructuredRecovery {
    /// Sends the frozen body for the attempt `reserveAttempt` consumed and authorized, and returns the
    /// completed message's payload bytes. A lifecycle monitor polls the command record meanwhile and
    /// cancels the transfer on `suspend` or `cancel`. No partial output is published.
    func transmit(_ record: inout RecoveryOperationRecord, _ execution: Execution, credentials: AuthCredentials) async throws -> [UInt8] {
        let attemptID = record.attempts[record.attempts.count - 1].id
        // Its own chain: no retry and no 401 renewal (a reissue spends an attempt and passes the host's
        // authorization first), and this attempt's authorized credentials.
        let client = ResponsesClient(
            configuration: .init(
                endpoint: configuration.endpoint, timeouts: configuration.timeouts, retryPolicy: .disabled,
                maximumEventBytes: configuration.maximumEventBytes
            ),
            httpClient: httpClient,
            middlewares: [AuthenticationMiddleware(credentials: credentials), HTTPLoggingMiddleware(logSink: logSink, clock: clock)],
            clock: clock, wallClock: wallClock, logSink: logSink
        )
        let stream = client.stream(
            encodedBody: Array(record.request.body.utf8), clientRequestID: attemptID.uuidString.lowercased(), model: record.request.model
        )
        let maximumPayloadBytes = configuration.maximumPayloadBytes
        let partition = execution.partition
        let operationID = record.operationID
        let pollInterval = configuration.lifecyclePollInterval
        let clock = self.clock
        let outcome: StreamOutcome = try await withThrowingTaskGroup(of: StreamOutcome?.self) { group in
            group.addTask { try await Self.consume(stream, maximumPayloadBytes: maximumPayloadBytes) }
            group.addTask {
                while true {
                    try await clock.sleep(for: pollInterval)
                    if let command = try await partition.perform({ () throws(AgentRecoveryError) in
                        try Self.pendingStopCommand(partition, operationID)
                    }) {
                        throw RecoveryLifecycleStop(command: command)
                    }
                }
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let next { return next }
            }
            throw CancellationError()
        }
        record.responseID = outcome.responseID ?? record.responseID
        record.lastSequenceNumber = outcome.lastSequenceNumber ?? record.lastSequenceNumber
        return outcome.payload
    }

    /// What a completed stream produced.
    struct StreamOutcome: Sendable {
        var payload: [UInt8]
        var responseID: String?
        var lastSequenceNumber: Int?
    }

    /// Reads the stream to `response.completed` and returns the final assistant message's text. Tool
    /// activity is rejected at once (nothing is executed).
    static func consume(_ stream: ResponsesEventStream, maximumPayloadBytes: Int) async throws -> StreamOutcome {
        var responseID: String?
        var lastSequenceNumber: Int?
        var messageText: String?
        var doneTexts: [String] = []
        func toolActivity() -> AgentRuntimeError {
            AgentRuntimeError(
                code: .invalidToolResult, message: "the model started a tool call; structured recovery is tool-free and runs no tools",
                interruption: .init(responseID: responseID, lastSequenceNumber: lastSequenceNumber, hadOutput: true, hadToolActivity: true)
            )
        }
        for try await event in stream {
            if let sequence = event.sequenceNumber { lastSequenceNumber = sequence }
            switch event.kind {
            case .created(let info), .inProgress(let info), .queued(let info):
                responseID = info.id ?? responseID
            case .completed(let info):
                responseID = info.id ?? responseID
                let text = messageText ?? doneTexts.joined()
                guard !text.isEmpty else {
                    throw AgentRuntimeError(code: .structuredOutputMissing, message: "the response completed without a structured payload")
                }
                return StreamOutcome(payload: Array(text.utf8), responseID: responseID, lastSequenceNumber: lastSequenceNumber)
            case .outputItemAdded(_, let item), .outputItemDone(_, let item):
                switch item {
                case .functionCall, .customToolCall, .webSearchCall, .imageGenerationCall: throw toolActivity()
                case .unknown(let type, _) where type.hasSuffix("_call"): throw toolActivity()
                case .message(let message) where message.role == "assistant":
                    if case .outputItemDone = event.kind { messageText = message.text }
                default: break
                }
            case .functionCallArgumentsDelta, .functionCallArgumentsDone, .customToolCallInputDelta, .webSearchCall, .imageGenerationCall:
                throw toolActivity()
            case .outputTextDone(_, _, _, let text):
                doneTexts.append(text)
            default:
                break
            }
            if (messageText?.utf8.count ?? 0) > maximumPayloadBytes || doneTexts.reduce(0, { $0 + $1.utf8.count }) > maximumPayloadBytes {
                throw AgentRuntimeError(code: .structuredOutputTooLarge, message: "the structured payload is larger than \(maximumPayloadBytes) bytes")
            }
        }
        throw AgentRuntimeError(code: .responsesStreamDisconnected, message: "the stream ended before response.completed")
    }

    /// Parses `payload` strictly, validates it against `format` and decodes it.
    func decodeValidated<Output: Decodable>(
        _ payload: [UInt8], as type: Output.Type, format: AgentStructuredOutputFormat, decoder: JSONDecoder
    ) throws -> Output {
        guard payload.count <= configuration.maximumPayloadBytes else {
            throw AgentRuntimeError(code: .structuredOutputTooLarge, message: "the structured payload is larger than \(configuration.maximumPayloadBytes) bytes")
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: payload)
        } catch {
            throw AgentRuntimeError(code: .structuredOutputInvalid, message: "the structured payload is not valid JSON (\(error.code.rawValue))")
        }
        let result = try format.validator().validate(value)
        guard result.isValid else {
            // Pointers can name keys the model wrote, so the message carries only the count and keywords.
            let keywords = Set(result.errors.map(\.keyword)).sorted().joined(separator: ", ")
            throw AgentRuntimeError(
                code: .structuredOutputInvalid, message: "the structured payload violates the schema (\(result.errors.count) error(s): \(keywords))"
            )
        }
        do {
            return try decoder.decode(Output.self, from: Data(payload))
        } catch {
            throw AgentRuntimeError(code: .structuredOutputDecodingFailed, message: "the structured payload did not decode into \(Output.self)")
        }
    }

    /// Saves the validated completion (checking account and lifecycle first); only then may it be returned.
    func deliverCompletion(_ record: inout RecoveryOperationRecord, _ payload: [UInt8], _ execution: Execution) async throws {
        let id = record.operationID
        // No network here when the provider can name its account without it: a token refresh failing now
        // must not cost the completion. A provider that cannot (its `currentBinding()` is `nil`, the
        // protocol's default) is asked for its credentials, as the account check before sending does;
        // when that fails the result is not delivered, as after a sign-out, and when the task is
        // cancelled meanwhile it stops as cancellation during the generation does.
        var binding = await authProvider.currentBinding()
        if binding == nil {
            do {
                binding = try await authProvider.credentials().binding
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                binding = nil
            }
        }
        guard binding == record.binding else {
            record.blocker = binding == nil ? .authenticationRequired : .accountMismatch
            try record.apply(.interrupt)
            try record.attempts[record.attempts.count - 1].apply(.fail, operationID: id)
            record.attempts[record.attempts.count - 1].failureCode = AgentRecoveryError.Code.accountMismatch.rawValue
            try await persist(&record, execution.partition, execution.lease)
            throw AgentRecoveryError(
                code: .accountMismatch, message: "the account changed or signed out during generation; the result is not delivered", operationID: id
            )
        }
        var completed = record
        completed.completedPayload = String(decoding: payload, as: UTF8.self)
        try completed.apply(.complete)
        completed.completedAt = wallClock.now()
        completed.lastFailure = nil
        completed.blocker = nil
        completed.pendingAttemptID = nil // no attempt follows a completion
        try completed.attempts[completed.attempts.count - 1].apply(.complete, operationID: id)
        completed.attempts[completed.attempts.count - 1].responseID = completed.responseID
        completed.attempts[completed.attempts.count - 1].lastSequenceNumber = completed.lastSequenceNumber
        // Under the control lock: a permanent cancel is either seen here (nothing delivered) or comes after
        // the completion is saved.
        let toSave = completed
        let saved = try await execution.partition.perform { () throws(AgentRecoveryError) -> RecoveryOperationRecord? in
            try execution.partition.withControlLock(id) { () throws(AgentRecoveryError) in
                if try Self.pendingStopCommand(execution.partition, id) == .cancelled { return nil }
                var saved = toSave
                try self.persistOnQueue(&saved, execution.partition, execution.lease)
                return saved
            }
        }
        guard let saved else {
            try await stop(&record, execution, command: .cancelled)
            throw CancellationError()
        }
        record = saved
        emit("recovery.receipt.saved", record, record.responseID.map { ["provider_response_id": $0] } ?? [:])
    }
}
