import CodexTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A URLSession data delegate that records what a task delivers, callback by callback, so tests can see
/// the response head and each body piece as they arrive (before the task completes).
///
/// `@unchecked Sendable`: the only mutable state is `recorded`, read and written under `lock` (an `NSLock`
/// rather than `Mutex`, whose futex is invisible to ThreadSanitizer on Linux).
final class RecordingDataDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// How a task ended.
    enum Completion: Equatable {
        case success
        case failure(domain: String, code: Int)
    }

    /// What has arrived so far.
    struct Snapshot {
        var statusCode: Int?
        var headers: [String: String] = [:]
        var pieces: [[UInt8]] = []
        var completion: Completion?

        /// All body bytes so far.
        var body: [UInt8] { pieces.flatMap(\.self) }
    }

    private let lock = NSLock()
    private var recorded = Snapshot()

    /// A copy of what has arrived so far.
    var snapshot: Snapshot { update { $0 } }

    /// Runs `body` on the recorded snapshot under the lock.
    private func update<Result>(_ body: (inout Snapshot) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&recorded)
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] {
            headers[String(describing: name)] = String(describing: value)
        }
        update { snapshot in
            snapshot.statusCode = http?.statusCode
            snapshot.headers = headers
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let bytes = [UInt8](data)
        update { $0.pieces.append(bytes) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let completion: Completion
        if let error {
            let nsError = error as NSError
            completion = .failure(domain: nsError.domain, code: nsError.code)
        } else {
            completion = .success
        }
        update { $0.completion = completion }
    }

    /// Waits until `condition` holds for the snapshot, polling every few milliseconds.
    /// - Returns: Whether it held before `timeout`.
    func wait(timeout: Duration = .hangGuard, until condition: (Snapshot) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition(snapshot) {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }
}
