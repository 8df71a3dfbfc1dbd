import CodexCore
import Foundation

/// The typed events of one streamed turn. Pull-based: the network is read only as fast as the events
/// are consumed, and dropping the iterator (or cancelling its task) closes the connection.
public struct ResponsesEventStream: AsyncSequence, Sendable {
    /// A decoded event.
    public typealias Element = ResponsesStreamEvent

    let client: ResponsesClient
    let body: [UInt8]
    let sessionID: String?
    let clientRequestID: String?

    /// Makes the iterator. Iterate from one task.
    public func makeAsyncIterator() -> Iterator {
        Iterator(stream: self)
    }

    /// Reads the events.
    public struct Iterator: AsyncIteratorProtocol {
        private let stream: ResponsesEventStream
        private var attempt = 0
        private var recoveredUnauthorized = false
        private var bodyIterator: HTTPResponseBody.AsyncIterator?
        private var framer: SSEFramer
        private var decoder: ResponsesEventDecoder
        private var sseEvents: [SSEEvent] = []
        private var pending: [ResponsesStreamEvent] = []
        private var pendingIndex = 0
        private var outputDelivered = false
        private var toolActivity = false
        private var finished = false
        private var errorEvent: AgentRuntimeError?
        /// A framing or decoding failure found while reading a chunk, raised once the events decoded
        /// before it have been delivered.
        private var deferredFailure: (any Error)?
        private var responseID: String?
        private var lastSequenceNumber: Int?
        private var random = SystemRandomNumberGenerator()
        /// The secrets of every credential used so far: errors are scrubbed of them before they leave.
        private var secrets: [String] = []
        /// The response body bytes received so far (SSE framing included), summed over every attempt:
        /// bytes of an attempt that was retried still count. Error bodies of non-2xx responses do not.
        public private(set) var receivedBytes = 0
        /// The most body bytes this stream may receive (all attempts); beyond it `next()` throws
        /// `execution_limit_exceeded` with `executionLimit` `.responseBytes`. `nil` (default): no limit.
        public var maximumReceivedBytes: Int?

        init(stream: ResponsesEventStream) {
            self.stream = stream
            framer = SSEFramer(maximumEventBytes: stream.client.configuration.maximumEventBytes)
            decoder = ResponsesEventDecoder(wallClock: stream.client.wallClock)
        }

        /// The next event, or `nil` after `response.completed`.
        ///
        /// - Throws: ``CodexCore/AgentRuntimeError`` (`responses_stream_disconnected`, HTTP and provider
        ///   errors, timeouts) or `CancellationError`.
        public mutating func next() async throws -> ResponsesStreamEvent? {
            do {
                return try await nextUnredacted()
            } catch let error as AgentRuntimeError {
                // A server may echo the credential back in a message, code or request ID.
                throw error.redacting(secrets)
            }
        }

        private mutating func nextUnredacted() async throws -> ResponsesStreamEvent? {
            while !finished {
                if pendingIndex < pending.count {
                    let event = pending[pendingIndex]
                    pendingIndex += 1
                    if let delivered = try await deliver(event) { return delivered }
                    continue
                }
                pending.removeAll(keepingCapacity: true)
                pendingIndex = 0
                if let failure = deferredFailure {
                    deferredFailure = nil
                    try await fail(failure)
                    continue
                }
                if bodyIterator == nil {
                    try await connect()
                    continue
                }
                try await readChunk()
            }
            return nil
        }

        // MARK: - Events

        /// Returns the event to hand to the caller, `nil` to skip it, or throws for a failure.
        private mutating func deliver(_ event: ResponsesStreamEvent) async throws -> ResponsesStreamEvent? {
            if let sequence = event.sequenceNumber { lastSequenceNumber = sequence }
            switch event.kind {
            case .created(let info), .inProgress(let info), .queued(let info):
                responseID = info.id ?? responseID
                return event
            case .completed(let info):
                responseID = info.id ?? responseID
                finished = true
                bodyIterator = nil
                return event
            case .failed, .incomplete:
                if case .failed(let info) = event.kind { responseID = info.id ?? responseID }
                if case .incomplete(let info) = event.kind { responseID = info.id ?? responseID }
                let error = ResponsesErrorMapper.error(streamEvent: event.kind, responseID: responseID)
                    ?? AgentRuntimeError(code: .providerError, message: "the response failed")
                try await fail(error)
                return nil
            case .error:
                errorEvent = ResponsesErrorMapper.error(streamEvent: event.kind, responseID: responseID)
                return nil
            case .rateLimits(let snapshots):
                stream.client.record(limits: snapshots, modelsETag: nil)
                return event
            case .outputItemAdded(_, let item), .outputItemDone(_, let item):
                outputDelivered = true
                if case .functionCall = item { toolActivity = true }
                if case .customToolCall = item { toolActivity = true }
                return event
            case .functionCallArgumentsDelta, .functionCallArgumentsDone, .customToolCallInputDelta:
                outputDelivered = true
                toolActivity = true
                return event
            case .outputTextDelta, .outputTextDone, .refusalDelta, .reasoningSummaryTextDelta, .reasoningSummaryTextDone,
                 .reasoningTextDelta, .imageGenerationCall, .webSearchCall, .reasoningSummaryPartAdded, .reasoningSummaryPartDone:
                outputDelivered = true
                return event
            case .contentPartAdded, .contentPartDone, .unknown:
                return event
            }
        }

        // MARK: - Network

        private mutating func connect() async throws {
            attempt += 1
            let client = stream.client
            let credentials = try await client.authProvider.credentials()
            try await connect(with: credentials)
        }

        private mutating func connect(with credentials: AuthCredentials) async throws {
            let client = stream.client
            secrets += credentials.secrets
            let request = HTTPRequest(
                method: "POST",
                url: client.configuration.endpoint.url("responses"),
                headers: client.headers(for: credentials, sessionID: stream.sessionID, clientRequestID: stream.clientRequestID),
                body: stream.body,
                timeouts: client.configuration.timeouts
            )
            let response: HTTPResponse
            do {
                response = try await client.httpClient.send(request)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                try await fail(interrupted(error))
                return
            }
            let limits = RateLimitParser.snapshots(fromHeaders: response.headers, now: client.wallClock.now())
            client.record(limits: limits, modelsETag: response.headers["x-models-etag"])
            if let etag = response.headers["x-models-etag"] { client.configuration.modelsETagObserver?(etag, credentials.binding) }
            guard response.isSuccess else {
                let bodyPrefix = (try? await response.body.prefix(upTo: ResponsesErrorMapper.maximumErrorBodyBytes)) ?? []
                let error = ResponsesErrorMapper.error(status: response.statusCode, headers: response.headers, body: bodyPrefix, now: client.wallClock.now())
                if response.statusCode == 401, !recoveredUnauthorized, client.configuration.recoversUnauthorized {
                    recoveredUnauthorized = true
                    if let renewed = try await client.authProvider.recoverAfterUnauthorized(credentials), renewed.binding == credentials.binding {
                        client.logSink.record(AgentLogEvent(level: .info, category: .auth, name: "auth.unauthorized.recovered"))
                        try await connect(with: renewed)
                        return
                    }
                }
                try await fail(error)
                return
            }
            bodyIterator = response.body.makeAsyncIterator()
            if !limits.isEmpty {
                pending.append(ResponsesStreamEvent(sequenceNumber: nil, kind: .rateLimits(limits)))
            }
        }

        private mutating func readChunk() async throws {
            let chunk: [UInt8]?
            do {
                chunk = try await bodyIterator?.next()
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                try await fail(bodyFailure(error))
                return
            }
            guard let chunk else {
                bodyIterator = nil
                _ = framer.finish()
                let failure = errorEvent ?? AgentRuntimeError(
                    code: .responsesStreamDisconnected, message: "the stream ended before response.completed",
                    interruption: interruptionDetails(transport: nil)
                )
                try await fail(failure)
                return
            }
            receivedBytes += chunk.count
            if let maximumReceivedBytes, receivedBytes > maximumReceivedBytes {
                // A budget, not a transport failure: never retried, and checked per chunk so bytes that
                // yield no event (comments, dropped duplicates) count too.
                bodyIterator = nil
                finished = true
                throw AgentRuntimeError.executionLimitExceeded(.responseBytes)
            }
            // Events framed before a framing error, and decoded before a decoding error, are delivered
            // first; the error follows them. Nothing after the response's terminal event is read.
            do {
                try framer.feed(chunk, into: &sseEvents)
            } catch {
                deferredFailure = error
            }
            for sseEvent in sseEvents {
                do {
                    guard let event = try decoder.decode(sseEvent) else { continue }
                    pending.append(event)
                    if event.isTerminal {
                        deferredFailure = nil
                        break
                    }
                } catch {
                    deferredFailure = error
                    break
                }
            }
            sseEvents.removeAll(keepingCapacity: true)
            if deferredFailure != nil { bodyIterator = nil }
        }

        /// A failure while reading the body: a lost connection is `responses_stream_disconnected` (the
        /// spec's code for a stream that ends without `response.completed`), carrying the transport error
        /// in `underlying` and its domain and code in the interruption details; timeouts and limits keep
        /// their own codes.
        private func bodyFailure(_ error: any Error) -> AgentRuntimeError {
            if let failure = error as? AgentRuntimeError, failure.code != .transportFailure { return interrupted(failure) }
            let transport = (error as? AgentRuntimeError)?.interruption
            return AgentRuntimeError(
                code: .responsesStreamDisconnected, message: "the connection was lost before response.completed",
                interruption: interruptionDetails(transport: transport), underlying: error
            )
        }

        // MARK: - Failure and retry

        private func interruptionDetails(transport: AgentRuntimeError.InterruptionDetails?) -> AgentRuntimeError.InterruptionDetails {
            AgentRuntimeError.InterruptionDetails(
                responseID: responseID, lastSequenceNumber: lastSequenceNumber, hadOutput: outputDelivered, hadToolActivity: toolActivity,
                providerCompleted: false, transportDomain: transport?.transportDomain, transportCode: transport?.transportCode
            )
        }

        private func interrupted(_ error: any Error) -> AgentRuntimeError {
            var mapped = (error as? AgentRuntimeError)
                ?? AgentRuntimeError(code: .transportFailure, message: "the connection failed", underlying: nil)
            mapped.interruption = interruptionDetails(transport: mapped.interruption)
            return mapped
        }

        /// Retries when allowed (retryable, no output delivered, attempts left), else throws.
        private mutating func fail(_ error: any Error) async throws {
            bodyIterator = nil
            guard var failure = error as? AgentRuntimeError else { throw error }
            let policy = stream.client.configuration.retryPolicy
            let retryable = RetryPolicy.isRetryable(failure)
            let canRetry = retryable && !outputDelivered && attempt < policy.maximumAttempts
            failure.retry = .init(
                attempt: attempt, maximumAttempts: policy.maximumAttempts, isRetryable: retryable,
                safety: outputDelivered ? .outputAlreadyEmitted : .beforeOutput
            )
            guard canRetry else {
                finished = true
                throw failure
            }
            let delay = policy.delay(afterAttempt: attempt, retryAfter: failure.http?.retryAfter, using: &random)
            stream.client.logSink.record(AgentLogEvent(
                level: .notice, category: .retry, name: "retry.scheduled", message: "retrying after a transient failure",
                metadata: ["attempt": String(attempt), "maximum_attempts": String(policy.maximumAttempts), "error_code": failure.code.rawValue,
                           "delay_ms": String(Int(delay.inSeconds * 1000))]
            ))
            try await stream.client.clock.sleep(for: delay)
            framer = SSEFramer(maximumEventBytes: stream.client.configuration.maximumEventBytes)
            decoder = ResponsesEventDecoder(wallClock: stream.client.wallClock)
            errorEvent = nil
            pending.removeAll()
            pendingIndex = 0
        }
    }
}
