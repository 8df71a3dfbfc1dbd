import CodexCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The per-request handler behind ``URLSessionHTTPClient`` (its session's ``SessionDelegateRouter``
/// forwards each task's callbacks to its own handler): resumes the caller when the headers arrive,
/// pushes body chunks into the bounded buffer, and tells the ``TransferWatchdog`` (which enforces the
/// timeouts) how the exchange progresses.
final class StreamingTaskDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: every mutable field lives in `state` (a Mutex) or in the watchdog's deadlines.

    /// Holds the task so the buffer's cancel callback can reach it before `self` exists.
    private final class TaskHandle: Sendable {
        let task = Mutex<URLSessionDataTask?>(nil)
        func cancel() { task.withLock { $0 }?.cancel() }
    }

    private struct State {
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var cancelledBeforeStart = false
        var timedOut: AgentRuntimeError?
        var responseHeadersSeen = false
    }

    let buffer: BoundedByteBuffer
    let watchdog: TransferWatchdog
    private let state = Mutex(State())
    private let taskHandle = TaskHandle()

    init(limit: Int, spillLimit: Int, spillDirectory: String?, hasBody: Bool, timeouts: HTTPTimeouts, deadlines: DeadlineScheduler) {
        watchdog = TransferWatchdog(timeouts: timeouts, hasBody: hasBody, scheduler: deadlines)
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

    // MARK: - Timeouts

    /// A timeout fired: the task is cancelled and the consumer gets the error — at once for the total
    /// timeout (a deadline for the whole exchange), after the bytes already held for the others.
    func expire(_ kind: TransferDeadlines.Kind, _ error: AgentRuntimeError) {
        fail(error, discardingHeld: kind == .total)
    }

    /// Ends the transfer with `error` unless it has already failed: the reader gets the bytes already
    /// held (unless `discardingHeld`), then the error; the task is cancelled.
    func fail(_ error: AgentRuntimeError, discardingHeld: Bool = false) {
        let first = state.withLock { state -> Bool in
            guard state.timedOut == nil else { return false }
            state.timedOut = error
            return true
        }
        guard first else { return }
        // The buffer first: cancelling the task lets `didCompleteWithError` run on the delegate queue at
        // once, and its plain finish would otherwise win and keep the held bytes in front of the error.
        buffer.finish(throwing: error, discardingHeld: discardingHeld)
        taskHandle.cancel()
    }

    // MARK: - URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64
    ) {
        let complete = totalBytesExpectedToSend <= 0 || totalBytesSent >= totalBytesExpectedToSend
        watchdog.update { deadlines, now in complete ? deadlines.bodySent(at: now) : deadlines.activity(at: now) }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        var fields: [HTTPHeaders.Field] = []
        var status = 0
        if let http = response as? HTTPURLResponse {
            status = http.statusCode
            for (name, value) in http.allHeaderFields {
                fields.append(HTTPHeaders.Field(name: "\(name)", value: "\(value)"))
            }
            fields.sort { $0.name.lowercased() < $1.name.lowercased() }
        }
        watchdog.update { deadlines, now in deadlines.headersReceived(at: now) }
        let continuation = state.withLock { state -> CheckedContinuation<HTTPResponse, any Error>? in
            state.responseHeadersSeen = true
            defer { state.continuation = nil }
            return state.continuation
        }
        guard !(100..<200).contains(status) else {
            // FoundationNetworking reports the first head it reads, so an interim 1xx response hides the
            // final status: fail clearly rather than pass a 1xx off as the answer.
            completionHandler(.cancel)
            continuation?.resume(throwing: AgentRuntimeError(.interimResponse(status: status)))
            return
        }
        completionHandler(.allow)
        continuation?.resume(returning: HTTPResponse(statusCode: status, headers: HTTPHeaders(fields), body: HTTPResponseBody(source: buffer)))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        watchdog.update { deadlines, now in deadlines.activity(at: now) }
        buffer.append([UInt8](data))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        watchdog.update { deadlines, _ in deadlines.finish() }
        let (continuation, timedOut) = state.withLock { state -> (CheckedContinuation<HTTPResponse, any Error>?, AgentRuntimeError?) in
            defer { state.continuation = nil }
            return (state.continuation, state.timedOut)
        }
        let origin = task.originalRequest?.url.flatMap(HTTPRequest.origin(of:))
        let failure: (any Error)? = timedOut ?? error.map { Self.mapError($0, origin: origin) }
        if let continuation {
            continuation.resume(throwing: failure ?? AgentRuntimeError(.noResponse))
        } else {
            buffer.finish(throwing: failure)
        }
    }

    static func mapError(_ error: any Error, origin: String? = nil) -> any Error {
        let nsError = error as NSError
        if nsError.domain == NSURLErrorDomain {
            if nsError.code == NSURLErrorCancelled { return CancellationError() }
            if nsError.code == NSURLErrorTimedOut {
                return AgentRuntimeError(.requestTimedOut(domain: nsError.domain, code: nsError.code))
            }
        }
        return AgentRuntimeError(.connectionFailed(detail: "\(nsError.domain) \(nsError.code)", domain: nsError.domain, code: nsError.code, origin: origin))
    }
}
