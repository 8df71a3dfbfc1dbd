import CodexCore
@testable import CodexRuntime
import CodexTestSupport
import Foundation
import Glibc
import Synchronization
import CodexTransport
import CodexSchema

/// A log sink a test can wait on: ``next(_:)`` returns the first event (already recorded or still to
/// come) that matches.
final class WaitingLogSink: AgentLogSink {
    private struct Waiter {
        let matches: @Sendable (AgentLogEvent) -> Bool
        let continuation: CheckedContinuation<AgentLogEvent, Never>
    }

    private let state = Mutex<(events: [AgentLogEvent], waiters: [Waiter])>(([], []))

    func record(_ event: AgentLogEvent) {
        let ready = state.withLock { state -> [Waiter] in
            state.events.append(event)
            let ready = state.waiters.filter { $0.matches(event) }
            state.waiters.removeAll { $0.matches(event) }
            return ready
        }
        for waiter in ready { waiter.continuation.resume(returning: event) }
    }

    var events: [AgentLogEvent] { state.withLock { $0.events } }

    func next(_ matches: @escaping @Sendable (AgentLogEvent) -> Bool) async -> AgentLogEvent {
        await withCheckedContinuation { continuation in
            let found = state.withLock { state -> AgentLogEvent? in
                if let event = state.events.first(where: matches) { return event }
                state.waiters.append(Waiter(matches: matches, continuation: continuation))
                return nil
            }
            if let found { continuation.resume(returning: found) }
        }
    }

    /// The first standard-error line of the server that contains `text`.
    func stderrLine(containing text: String) async -> String {
        await next { $0.name == "mcp.server.stderr" && $0.message.contains(text) }.message
    }
}

/// A signal a test waits for (a list change, a progress step), counting how often it fired.
final class Signal: Sendable {
    private let state = Mutex<(count: Int, waiters: [(Int, CheckedContinuation<Void, Never>)])>((0, []))

    func fire() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            let count = state.count
            let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
            state.waiters.removeAll { $0.0 <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    var count: Int { state.withLock { $0.count } }

    /// Returns once the signal has fired `count` times in all.
    func wait(count: Int = 1) async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }
}

enum MCPServers {
    /// A configuration running one of the test servers under `Tests/MCPServers` with the SDK's Python.
    static func stdio(
        _ name: String, script: String, arguments: [String] = [], environment: [String: String] = [:], requestTimeout: Duration = .seconds(60),
        maximumMessageBytes: Int = 1 << 20, secrets: [String] = []
    ) async throws -> MCPServerConfiguration {
        let python = try await MCPTestPython.interpreter()
        return MCPServerConfiguration(
            name: name, transport: .stdio(command: python, arguments: [MCPTestPython.script(script)] + arguments, environment: environment),
            requestTimeout: requestTimeout, connectTimeout: .seconds(60), maximumMessageBytes: maximumMessageBytes, secrets: secrets
        )
    }

    /// Whether process `pid` still exists (a zombie counts until reaped).
    static func exists(_ pid: Int32) -> Bool { kill(pid, 0) == 0 }
}

/// Records every request that passes (after the steps before it).
final class RecordingMiddleware: HTTPMiddleware {
    private let recorded = Mutex<[HTTPRequest]>([])

    var requests: [HTTPRequest] { recorded.withLock { $0 } }

    func intercept(_ request: HTTPRequest, context: HTTPMiddlewareContext, next: HTTPMiddlewareNext) async throws -> HTTPResponse {
        recorded.withLock { $0.append(request) }
        return try await next(request)
    }

    /// The POSTs whose `Mcp-Method` (stateless) or body method is `method`.
    func posts(_ method: String) -> [HTTPRequest] {
        requests.filter { request in
            guard request.method == "POST", let body = request.body, let value = try? JSONValue(parsing: body) else { return false }
            return value["method"]?.stringValue == method
        }
    }
}

extension MCPServers {
    /// Whether `pid` has exited and waits to be reaped by its parent (here: init, after its parent died).
    static func isZombie(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        return status.split(separator: ")").last?.split(separator: " ").first == "Z"
    }
}
