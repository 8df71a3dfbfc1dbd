import CodexCore
import Foundation

/// The typed events of one streamed turn. Pull-based: the network is read only as fast as the events
/// are consumed, and dropping the iterator (or cancelling its task) closes the connection.
///
/// The iterator is the retry step of the client's chain: each attempt is one POST through the
/// middleware (authentication, logging) and the HTTP client, and a failed attempt is sent again under
/// the client's ``RetryPolicy`` only while no output has reached the caller, because only the stream
/// knows that.
public struct ResponsesEventStream: AsyncSequence, Sendable {
    /// A decoded event.
    public typealias Element = ResponsesStreamEvent

    let client: ResponsesClient
    let body: [UInt8]
    /// The requested model, for telemetry (`nil` for a body encoded elsewhere).
    let model: String?
    let sessionID: String?
    let clientRequestID: String?
    /// Stops the stream from another task, when the reader gave one.
    let interruption: StreamInterruption?

    /// Makes the iterator. Iterate from one task.
    public func makeAsyncIterator() -> Iterator {
        Iterator(stream: self)
    }

    /// Reads the events.
    public struct Iterator: AsyncIteratorProtocol {
        private let stream: ResponsesEventStream
        private var attempt: ResponsesAttempt?
        private var attemptNumber = 0
        private var progress = ResponsesAttempt.Progress()
        private var finished = false
        private var random = SystemRandomNumberGenerator()
        /// The secrets of the credentials of attempts already over: errors are scrubbed of them (and of
        /// the current attempt's) before they leave.
        private var retiredSecrets: [String] = []
        private var retiredBytes = 0
        /// The response body bytes received so far (SSE framing included), summed over every attempt:
        /// bytes of an attempt that was retried still count. Error bodies of non-2xx responses do not.
        public var receivedBytes: Int { retiredBytes + (attempt?.receivedBytes ?? 0) }
        /// The most body bytes this stream may receive (all attempts); beyond it `next()` throws
        /// `execution_limit_exceeded` with `executionLimit` `.responseBytes`. `nil` (default): no limit.
        public var maximumReceivedBytes: Int?

        init(stream: ResponsesEventStream) {
            self.stream = stream
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
                throw error.redacting(retiredSecrets + (attempt?.context.secrets ?? []))
            }
        }

        private mutating func nextUnredacted() async throws -> ResponsesStreamEvent? {
            while !finished {
                if stream.interruption?.isInterrupted == true {
                    // Interrupted by another task: no further read, retry or connection.
                    finished = true
                    attempt?.telemetry?.end(failure: CancellationError(), willRetry: false, secrets: [])
                    attempt = nil
                    throw CancellationError()
                }
                if attempt == nil {
                    attemptNumber += 1
                    attempt = ResponsesAttempt(stream: stream, number: attemptNumber)
                }
                let budget = maximumReceivedBytes.map { $0 - retiredBytes }
                let step: ResponsesAttempt.Step?
                do {
                    step = try await attempt?.next(progress: &progress, maximumBytes: budget)
                } catch let failure as ResponsesAttempt.StepFailure {
                    finished = true
                    attempt?.telemetry?.end(failure: failure.error, willRetry: false, secrets: retiredSecrets + (attempt?.context.secrets ?? []))
                    throw failure.error
                } catch let failure as AgentRuntimeError {
                    try await retryOrThrow(failure)
                    continue
                } catch {
                    finished = true
                    attempt?.telemetry?.end(failure: error, willRetry: false, secrets: [])
                    throw error
                }
                switch step {
                case .event(let event)?:
                    return event
                case .finished?, nil:
                    finished = true
                case .budgetExceeded?:
                    // A budget, not a transport failure: never retried.
                    finished = true
                    let failure = AgentRuntimeError.executionLimitExceeded(.responseBytes)
                    attempt?.telemetry?.end(failure: failure, willRetry: false, secrets: [])
                    throw failure
                }
            }
            return nil
        }

        /// Ends the current attempt and starts the wait for the next one when `failure` may be sent
        /// again (retryable, no output delivered, attempts left); otherwise throws it.
        private mutating func retryOrThrow(_ failure: AgentRuntimeError) async throws {
            let ended = attempt
            if let attempt {
                retiredSecrets += attempt.context.secrets
                retiredBytes += attempt.receivedBytes
            }
            attempt = nil
            if stream.interruption?.isInterrupted == true {
                // The failure is the interruption's cancelled body: not a failure to retry.
                finished = true
                ended?.telemetry?.end(failure: CancellationError(), willRetry: false, secrets: [])
                throw CancellationError()
            }
            var failure = failure
            let policy = stream.client.configuration.retryPolicy
            let retryable = RetryPolicy.isRetryable(failure)
            let canRetry = retryable && !progress.outputDelivered && attemptNumber < policy.maximumAttempts
            failure.retry = .init(
                attempt: attemptNumber, maximumAttempts: policy.maximumAttempts, isRetryable: retryable,
                safety: progress.outputDelivered ? .outputAlreadyEmitted : .beforeOutput
            )
            let secrets = retiredSecrets
            guard canRetry else {
                finished = true
                ended?.telemetry?.end(failure: failure, willRetry: false, secrets: secrets)
                throw failure
            }
            let delay = policy.delay(afterAttempt: attemptNumber, retryAfter: failure.http?.retryAfter, using: &random)
            if let budget = TurnTimeBudget.current, budget.cannotAfford(delay) {
                // The wait would outlast the turn: fail now, with the server's wait in the error.
                finished = true
                ended?.telemetry?.end(failure: failure, willRetry: false, secrets: secrets)
                throw failure
            }
            ended?.telemetry?.end(failure: failure, willRetry: true, secrets: secrets)
            stream.client.logSink.record(AgentLogEvent(
                level: .notice, category: .retry, name: "retry.scheduled", message: "retrying after a transient failure",
                metadata: ["attempt": String(attemptNumber), "maximum_attempts": String(policy.maximumAttempts), "error_code": failure.code.rawValue,
                           "delay_ms": String(Int(delay.inSeconds * 1000))]
            ))
            AgentSpan.current?.telemetry.metrics.add(.retries, 1, attributes: ["error.type": .string(failure.code.rawValue)])
            try await stream.client.clock.sleep(for: delay)
        }
    }
}
