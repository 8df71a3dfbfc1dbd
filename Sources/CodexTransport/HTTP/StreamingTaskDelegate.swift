import CodexCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The per-request URLSession delegate behind ``URLSessionHTTPClient``: resumes the caller when the
/// headers arrive, pushes body chunks into the bounded buffer, enforces the timeouts.
final class StreamingTaskDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: every mutable field lives in `state` (a Mutex); `onFinish` is set once before the
    // task starts and only read afterwards.

    enum Phase { case sending, awaitingHeaders, streaming, finished }

    enum TimeoutKind: String {
        case connect, firstByte = "first byte", idle, total

        var limitDescription: String { rawValue }
    }

    /// Holds the task so the buffer's cancel callback can reach it before `self` exists.
    private final class TaskHandle: Sendable {
        let task = Mutex<URLSessionDataTask?>(nil)
        func cancel() { task.withLock { $0 }?.cancel() }
    }

    private struct State {
        var phase: Phase
        var lastActivity: Duration = .zero
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var cancelledBeforeStart = false
        var timedOut: TimeoutKind?
        var responseHeadersSeen = false
    }

    let buffer: BoundedByteBuffer
    private let state: Mutex<State>
    private let taskHandle = TaskHandle()
    private let timeouts: HTTPTimeouts
    private let elapsed: @Sendable () -> Duration
    var onFinish: @Sendable () -> Void = {}

    init(
        limit: Int, spillLimit: Int, spillDirectory: String?, hasBody: Bool, timeouts: HTTPTimeouts, elapsed: @escaping @Sendable () -> Duration
    ) {
        self.timeouts = timeouts
        self.elapsed = elapsed
        state = Mutex(State(phase: hasBody ? .sending : .awaitingHeaders))
        let handle = taskHandle
        buffer = BoundedByteBuffer(limit: limit, spillLimit: spillLimit, spillDirectory: spillDirectory, onCancel: { handle.cancel() })
        super.init()
    }

    func attach(task: URLSessionDataTask) {
        taskHandle.task.withLock { $0 = task }
    }

    /// Registers the caller; returns `false` when it was cancelled before starting.
    func start(continuation: CheckedContinuation<HTTPResponse, any Error>) -> Bool {
        let cancelled = state.withLock { state -> Bool in
            if state.cancelledBeforeStart { return true }
            state.continuation = continuation
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    func cancelBeforeHeaders() {
        let headersSeen = state.withLock { state -> Bool in
            if state.continuation == nil && !state.responseHeadersSeen { state.cancelledBeforeStart = true }
            return state.responseHeadersSeen
        }
        if !headersSeen { taskHandle.cancel() }
    }

    // MARK: - Watchdog

    /// Sleeps until the nearest deadline (waking at least every quarter of the shortest timeout, so a
    /// phase change is noticed) and fires the timeout that passed; returns when the exchange ends.
    func watch(sleep: (Duration) async throws -> Void) async {
        let shortest = [timeouts.connect, timeouts.firstByte, timeouts.idle, timeouts.total ?? timeouts.idle].min() ?? timeouts.idle
        let quantum = min(max(shortest / 4, .milliseconds(10)), .seconds(1))
        while !Task.isCancelled {
            let (phase, lastActivity) = state.withLock { ($0.phase, $0.lastActivity) }
            if phase == .finished { return }
            var deadlines: [(Duration, TimeoutKind)] = []
            if phase == .sending { deadlines.append((timeouts.connect, .connect)) }
            if phase == .sending || phase == .awaitingHeaders { deadlines.append((timeouts.firstByte, .firstByte)) }
            if phase == .streaming { deadlines.append((lastActivity + timeouts.idle, .idle)) }
            if let total = timeouts.total { deadlines.append((total, .total)) }
            let now = elapsed()
            if let nearest = deadlines.min(by: { $0.0 < $1.0 }), now >= nearest.0 {
                fire(nearest.1)
                return
            }
            let wake = min(deadlines.map(\.0).min() ?? (now + quantum), now + quantum)
            do { try await sleep(wake) } catch { return }
        }
    }

    private func fire(_ kind: TimeoutKind) {
        let fired = state.withLock { state -> Bool in
            guard state.phase != .finished, state.timedOut == nil else { return false }
            state.timedOut = kind
            return true
        }
        if fired {
            taskHandle.cancel()
            buffer.finish(throwing: timeoutError(kind))
        }
    }

    private func markActivity() {
        let now = elapsed()
        state.withLock { $0.lastActivity = now }
    }

    // MARK: - URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64
    ) {
        let now = elapsed()
        let complete = totalBytesExpectedToSend <= 0 || totalBytesSent >= totalBytesExpectedToSend
        state.withLock { state in
            if state.phase == .sending, complete { state.phase = .awaitingHeaders }
            state.lastActivity = now
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let now = elapsed()
        var fields: [HTTPHeaders.Field] = []
        var status = 0
        if let http = response as? HTTPURLResponse {
            status = http.statusCode
            for (name, value) in http.allHeaderFields {
                fields.append(HTTPHeaders.Field(name: "\(name)", value: "\(value)"))
            }
            fields.sort { $0.name.lowercased() < $1.name.lowercased() }
        }
        let continuation = state.withLock { state -> CheckedContinuation<HTTPResponse, any Error>? in
            state.phase = .streaming
            state.responseHeadersSeen = true
            state.lastActivity = now
            defer { state.continuation = nil }
            return state.continuation
        }
        completionHandler(.allow)
        continuation?.resume(returning: HTTPResponse(statusCode: status, headers: HTTPHeaders(fields), body: HTTPResponseBody(source: buffer)))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        markActivity()
        buffer.append([UInt8](data))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (continuation, timedOut) = state.withLock { state -> (CheckedContinuation<HTTPResponse, any Error>?, TimeoutKind?) in
            state.phase = .finished
            defer { state.continuation = nil }
            return (state.continuation, state.timedOut)
        }
        let failure: (any Error)? = timedOut.map { timeoutError($0) } ?? error.map(Self.mapError)
        if let continuation {
            continuation.resume(throwing: failure ?? AgentRuntimeError(code: .transportFailure, message: "the request ended without a response"))
        } else {
            buffer.finish(throwing: failure)
        }
        onFinish()
    }

    private func timeoutError(_ kind: TimeoutKind) -> AgentRuntimeError {
        let limit: Duration
        switch kind {
        case .connect: limit = timeouts.connect
        case .firstByte: limit = timeouts.firstByte
        case .idle: limit = timeouts.idle
        case .total: limit = timeouts.total ?? .zero
        }
        return AgentRuntimeError(code: .timedOut, message: "the \(kind.limitDescription) timeout of \(limit) passed")
    }

    static func mapError(_ error: any Error) -> any Error {
        let nsError = error as NSError
        if nsError.domain == NSURLErrorDomain {
            if nsError.code == NSURLErrorCancelled { return CancellationError() }
            if nsError.code == NSURLErrorTimedOut {
                return AgentRuntimeError(
                    code: .timedOut, message: "the request timed out",
                    interruption: .init(transportDomain: nsError.domain, transportCode: nsError.code)
                )
            }
        }
        return AgentRuntimeError(
            code: .transportFailure, message: "the connection failed (\(nsError.domain) \(nsError.code))",
            interruption: .init(transportDomain: nsError.domain, transportCode: nsError.code)
        )
    }
}
