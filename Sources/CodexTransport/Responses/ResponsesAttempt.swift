import CodexCore

/// One POST of a streamed turn: sent through the client's middleware chain, a non-2xx reply mapped to
/// its typed error, the SSE body framed and decoded into events. It never retries; the
/// ``ResponsesEventStream`` around it decides whether a failure is sent again.
struct ResponsesAttempt {
    /// What the attempts of one stream have seen so far. It is carried from attempt to attempt, because
    /// a failure's interruption details describe the stream, not one attempt.
    struct Progress {
        var responseID: String?
        var lastSequenceNumber: Int?
        var outputDelivered = false
        var toolActivity = false

        func interruptionDetails(transport: AgentRuntimeError.InterruptionDetails?) -> AgentRuntimeError.InterruptionDetails {
            AgentRuntimeError.InterruptionDetails(
                responseID: responseID, lastSequenceNumber: lastSequenceNumber, hadOutput: outputDelivered, hadToolActivity: toolActivity,
                providerCompleted: false, transportDomain: transport?.transportDomain, transportCode: transport?.transportCode
            )
        }
    }

    /// An error a middleware step raised itself (no credentials, a refused sign-in, a host's own error):
    /// final, never retried, passed on unchanged.
    struct StepFailure: Error {
        let error: any Error
    }

    /// What ``next(progress:maximumBytes:)`` produced.
    enum Step {
        /// An event for the caller.
        case event(ResponsesStreamEvent)
        /// `response.completed` was delivered; nothing more is read.
        case finished
        /// The body passed the byte budget; the connection is closed.
        case budgetExceeded
    }

    private let stream: ResponsesEventStream
    /// This attempt's span and metrics, when telemetry is on.
    let telemetry: ResponsesAttemptTelemetry?
    /// Shared by the steps of this attempt's request (the credentials it went out with).
    let context = HTTPMiddlewareContext()
    private var connected = false
    private var bodyIterator: HTTPResponseBody.AsyncIterator?
    /// The body of a response that reached `response.completed`, read to its end before the attempt
    /// finishes so its connection is reused.
    private var completedBody: HTTPResponseBody.AsyncIterator?
    private var framer: SSEFramer
    private var decoder: ResponsesEventDecoder
    private var pending: [ResponsesStreamEvent] = []
    private var pendingIndex = 0
    private var finished = false
    private var errorEvent: AgentRuntimeError?
    /// The provider's request ID from the response head (`x-request-id`), for a failure the stream reports
    /// after it.
    private var requestID: String?
    /// A framing or decoding failure found while reading a chunk, raised once the events decoded
    /// before it have been delivered.
    private var deferredFailure: (any Error)?
    /// The body bytes this attempt received (SSE framing included).
    private(set) var receivedBytes = 0

    init(stream: ResponsesEventStream, number: Int) {
        self.stream = stream
        telemetry = ResponsesAttemptTelemetry(stream: stream, number: number)
        framer = SSEFramer(maximumEventBytes: stream.client.configuration.maximumEventBytes)
        decoder = ResponsesEventDecoder(wallClock: stream.client.wallClock)
    }

    /// The next step.
    ///
    /// - Parameters:
    ///   - progress: The stream's progress, updated by every event delivered.
    ///   - maximumBytes: The most body bytes this attempt may receive, or `nil`.
    /// - Throws: The attempt's failure: an ``CodexCore/AgentRuntimeError`` the stream may retry, a
    ///   `CancellationError`, or a ``StepFailure`` (final).
    mutating func next(progress: inout Progress, maximumBytes: Int?) async throws -> Step {
        while !finished {
            if pendingIndex < pending.count {
                let event = pending[pendingIndex]
                pendingIndex += 1
                if let delivered = try deliver(event, progress: &progress) { return .event(delivered) }
                continue
            }
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            if let failure = deferredFailure {
                deferredFailure = nil
                throw close(failure)
            }
            if !connected {
                try await connect(progress: progress)
                continue
            }
            if try await readChunk(progress: progress, maximumBytes: maximumBytes) == false { return .budgetExceeded }
        }
        if let body = completedBody {
            completedBody = nil
            await Self.drain(body)
        }
        return .finished
    }

    /// The most bytes, and the longest time, spent reading what follows `response.completed`.
    static let drainLimit = (bytes: 64 * 1024, time: Duration.seconds(2))

    /// Reads what is left of a completed response's body (normally only its chunked terminator), so the
    /// HTTP client can hand the connection to a later request instead of closing it. Bounded by
    /// ``drainLimit``: past it the rest is dropped, which closes the connection.
    static func drain(_ body: HTTPResponseBody.AsyncIterator) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var body = body
                var drained = 0
                while drained <= drainLimit.bytes, let chunk = try? await body.next() { drained += chunk.count }
            }
            group.addTask { try? await Task.sleep(for: drainLimit.time) }
            _ = await group.next()
            group.cancelAll()
        }
    }

    // MARK: - Events

    /// Returns the event to hand to the caller, `nil` to skip it, or throws for a failure.
    private mutating func deliver(_ event: ResponsesStreamEvent, progress: inout Progress) throws -> ResponsesStreamEvent? {
        if let sequence = event.sequenceNumber { progress.lastSequenceNumber = sequence }
        switch event.kind {
        case .created(let info), .inProgress(let info), .queued(let info):
            progress.responseID = info.id ?? progress.responseID
            return event
        case .completed(let info):
            progress.responseID = info.id ?? progress.responseID
            telemetry?.complete(info)
            finished = true
            completedBody = bodyIterator
            bodyIterator = nil
            return event
        case .failed(let info), .incomplete(let info):
            progress.responseID = info.id ?? progress.responseID
            throw close(streamError(event.kind, progress: progress) ?? AgentRuntimeError(.responseFailed))
        case .error:
            errorEvent = streamError(event.kind, progress: progress)
            return nil
        case .rateLimits(let snapshots):
            stream.client.record(limits: snapshots, modelsETag: nil, binding: context.credentials.last?.binding)
            return event
        case .outputItemAdded(_, let item), .outputItemDone(_, let item):
            if !progress.outputDelivered { telemetry?.noteFirstOutput() }
            progress.outputDelivered = true
            if case .functionCall = item { progress.toolActivity = true }
            if case .customToolCall = item { progress.toolActivity = true }
            return event
        case .functionCallArgumentsDelta, .functionCallArgumentsDone, .customToolCallInputDelta:
            if !progress.outputDelivered { telemetry?.noteFirstOutput() }
            progress.outputDelivered = true
            progress.toolActivity = true
            return event
        case .outputTextDelta, .outputTextDone, .refusalDelta, .reasoningSummaryTextDelta, .reasoningSummaryTextDone,
             .reasoningTextDelta, .imageGenerationCall, .webSearchCall, .reasoningSummaryPartAdded, .reasoningSummaryPartDone:
            if !progress.outputDelivered { telemetry?.noteFirstOutput() }
            progress.outputDelivered = true
            return event
        case .contentPartAdded, .contentPartDone, .unknown:
            return event
        }
    }

    /// The media type of a successful reply that cannot be an event stream (HTML, JSON, XML), or `nil`.
    /// Any other type, or none, is read as a stream: proxies label streams loosely.
    static func notAStream(_ contentType: String?) -> String? {
        guard let contentType else { return nil }
        let media = String(contentType.prefix { $0 != ";" }.filter { $0 != " " && $0 != "\t" }).lowercased()
        let refused = ["text/html", "application/xhtml+xml", "application/json", "application/problem+json", "text/xml", "application/xml"]
        return refused.first { $0 == media }
    }

    // MARK: - Network

    private mutating func connect(progress: Progress) async throws {
        connected = true
        let client = stream.client
        var headers: HTTPHeaders = [
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            "originator": client.configuration.originator,
            "User-Agent": client.configuration.userAgent,
        ]
        if let sessionID = stream.sessionID { headers["session_id"] = sessionID }
        if let clientRequestID = stream.clientRequestID { headers["x-client-request-id"] = clientRequestID }
        if let traceparent = telemetry?.traceparent { headers["traceparent"] = traceparent }
        let request = HTTPRequest(
            method: "POST", url: client.configuration.endpoint.url("responses"), headers: headers, body: stream.body,
            timeouts: client.configuration.timeouts
        )
        let response: HTTPResponse
        do {
            response = try await client.chain.send(request, context: context)
        } catch is CancellationError {
            throw close(CancellationError())
        } catch {
            // A step's own failure (no credentials, a refused sign-in) is final and passes unchanged; a
            // failure of the HTTP client is a lost connection.
            guard context.transportFailed else { throw close(StepFailure(error: error)) }
            throw close(Self.interrupted(error, progress: progress))
        }
        requestID = ResponsesErrorMapper.requestID(in: response.headers)
        telemetry?.noteResponse(status: response.statusCode, requestID: requestID, secrets: context.secrets)
        let limits = RateLimitParser.snapshots(fromHeaders: response.headers, now: client.wallClock.now())
        client.record(limits: limits, modelsETag: response.headers["x-models-etag"], binding: context.credentials.last?.binding)
        if let etag = response.headers["x-models-etag"], let binding = context.credentials.last?.binding {
            client.configuration.modelsETagObserver?(etag, binding)
        }
        guard response.isSuccess else {
            let bodyPrefix = (try? await response.body.prefix(upTo: ResponsesErrorMapper.maximumErrorBodyBytes)) ?? []
            throw close(ResponsesErrorMapper.error(status: response.statusCode, headers: response.headers, body: bodyPrefix, now: client.wallClock.now()))
        }
        // A page or a JSON document where the stream should be (an endpoint that is not the Responses
        // API, a captive portal, a proxy's own reply) would read as a stream that ended without an
        // event, and be sent again as if the connection had dropped.
        if let media = Self.notAStream(response.headers["content-type"]) {
            response.body.cancel()
            throw close(AgentRuntimeError(.malformed("the server answered HTTP \(response.statusCode) with \(media), not an event stream: check the endpoint")))
        }
        bodyIterator = response.body.makeAsyncIterator()
        let body = response.body
        stream.interruption?.reading { body.cancel() }
        if !limits.isEmpty {
            pending.append(ResponsesStreamEvent(sequenceNumber: nil, kind: .rateLimits(limits)))
        }
    }

    /// Reads one chunk and decodes its events; `false` when the chunk passed `maximumBytes`.
    private mutating func readChunk(progress: Progress, maximumBytes: Int?) async throws -> Bool {
        let chunk: [UInt8]?
        do {
            chunk = try await bodyIterator?.next()
        } catch is CancellationError {
            throw close(CancellationError())
        } catch {
            throw close(Self.bodyFailure(error, progress: progress))
        }
        guard let chunk else {
            _ = framer.finish()
            throw close(errorEvent ?? AgentRuntimeError(.streamEnded(progress.interruptionDetails(transport: nil))))
        }
        receivedBytes += chunk.count
        if let maximumBytes, receivedBytes > maximumBytes {
            // A budget, not a transport failure: checked per chunk so bytes that yield no event
            // (comments, dropped duplicates) count too.
            _ = close(CancellationError())
            return false
        }
        // Events framed before a framing error, and decoded before a decoding error, are delivered
        // first; the error follows them. Nothing after the response's terminal event is decoded. Each
        // event goes from the framer to the decoder as it completes (the framer is taken out meanwhile,
        // so that the closure may change the rest of the attempt).
        var framer = SSEFramer()
        swap(&framer, &self.framer)
        defer { swap(&framer, &self.framer) }
        var ended = false
        do {
            try framer.feed(chunk) { (type, data, _, _, byteOffset) throws(AgentRuntimeError) in
                guard !ended, let event = try decoder.decode(type: type, data: data, byteOffset: byteOffset) else { return }
                pending.append(event)
                ended = decoder.hasEnded
            }
        } catch {
            deferredFailure = error
        }
        if ended { deferredFailure = nil }
        if deferredFailure != nil { bodyIterator = nil }
        return true
    }

    /// The error a terminal stream event reports, with the response's request ID (the failure came on a
    /// response whose head said 200, so only the head names the request to quote to support).
    private func streamError(_ kind: ResponsesStreamEvent.Kind, progress: Progress) -> AgentRuntimeError? {
        guard var error = ResponsesErrorMapper.error(streamEvent: kind, responseID: progress.responseID) else { return nil }
        error.http?.requestID = requestID
        return error
    }

    /// Ends the attempt (its connection closes when the body iterator goes) and returns `error`.
    private mutating func close(_ error: any Error) -> any Error {
        bodyIterator = nil
        finished = true
        return error
    }

    /// A failure while reading the body: a lost connection is `responses_stream_disconnected` (the code
    /// for a stream that ends without `response.completed`), carrying the transport error in
    /// `underlying` and its domain and code in the interruption details; timeouts and limits keep their
    /// own codes, and so does a body its `Content-Encoding` cannot decode (the connection was fine).
    private static func bodyFailure(_ error: any Error, progress: Progress) -> AgentRuntimeError {
        if let failure = error as? AgentRuntimeError, failure.code != .transportFailure || CurlTransfer.isContentDecodingFailure(failure) {
            return interrupted(failure, progress: progress)
        }
        let transport = (error as? AgentRuntimeError)?.interruption
        return AgentRuntimeError(.connectionLost(progress.interruptionDetails(transport: transport), underlying: error))
    }

    /// `error` as a transport failure with the stream's interruption details.
    private static func interrupted(_ error: any Error, progress: Progress) -> AgentRuntimeError {
        var mapped = (error as? AgentRuntimeError)
            ?? AgentRuntimeError(.connectionFailedWithoutCode(underlying: error))
        mapped.interruption = progress.interruptionDetails(transport: mapped.interruption)
        return mapped
    }
}
