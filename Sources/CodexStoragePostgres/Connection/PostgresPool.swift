import CodexCore
import Foundation
import Synchronization

/// A bounded pool of libpq connections. A caller borrows one connection for one transaction; every
/// blocking libpq call runs on that connection's own queue, so a slow server never holds a thread of the
/// cooperative pool. Connections are opened on demand up to `size`; a caller beyond that waits for one to
/// come back. A connection that broke is closed instead of returned, and the next caller opens a new one.
final class PostgresPool: Sendable {
    let settings: PostgresConnectionSettings
    /// The most connections open at once.
    let size: Int

    private struct State {
        var idle: [PostgresConnection] = []
        var open = 0
        /// Callers waiting for a connection: resumed with one, or with `nil` to open their own.
        var waiters: [CheckedContinuation<PostgresConnection?, Never>] = []
        var closed = false
    }

    private let state = Mutex(State())

    init(settings: PostgresConnectionSettings, size: Int) {
        self.settings = settings
        self.size = max(1, size)
    }

    /// Closes the idle connections (borrowed ones close when they come back).
    func close() {
        let idle = state.withLock { state -> [PostgresConnection] in
            state.closed = true
            defer { state.idle = [] }
            state.open -= state.idle.count
            return state.idle
        }
        _ = idle
    }

    /// Runs `body` with a borrowed connection, on that connection's queue.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws(PostgresStoreError) -> T) async throws(PostgresStoreError) -> T {
        let connection = try await borrow()
        defer { giveBack(connection) }
        return try await connection.queue.perform { () throws(PostgresStoreError) -> T in try body(connection) }
    }

    private enum Take {
        case connection(PostgresConnection)
        case open
        case wait
    }

    private func borrow() async throws(PostgresStoreError) -> PostgresConnection {
        while true {
            let take = state.withLock { state -> Take in
                if let connection = state.idle.popLast() { return .connection(connection) }
                if state.open < size {
                    state.open += 1
                    return .open
                }
                return .wait
            }
            switch take {
            case .connection(let connection):
                return connection
            case .open:
                return try await open()
            case .wait:
                let handed: PostgresConnection? = await withCheckedContinuation { continuation in
                    let ready = state.withLock { state -> PostgresConnection?? in
                        if let connection = state.idle.popLast() { return .some(connection) }
                        if state.open < size {
                            state.open += 1
                            return .some(nil)
                        }
                        state.waiters.append(continuation)
                        return .none
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
                if let handed { return handed }
                // Told to open our own (a slot is reserved for us).
                return try await open()
            }
        }
    }

    /// Opens a connection for a reserved slot, off the cooperative pool; a failure frees the slot.
    private func open() async throws(PostgresStoreError) -> PostgresConnection {
        let settings = self.settings
        let outcome: Result<PostgresConnection, PostgresStoreError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                do throws(PostgresStoreError) {
                    continuation.resume(returning: .success(try PostgresConnection(settings)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        switch outcome {
        case .success(let connection):
            return connection
        case .failure(let error):
            releaseSlot()
            throw error
        }
    }

    /// Returns a connection: to the first waiter, or to the idle list; a broken one is closed and its
    /// slot handed on.
    private func giveBack(_ connection: PostgresConnection) {
        guard connection.isHealthy else {
            releaseSlot()
            return
        }
        let waiter = state.withLock { state -> CheckedContinuation<PostgresConnection?, Never>? in
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            if state.closed {
                state.open -= 1
            } else {
                state.idle.append(connection)
            }
            return nil
        }
        waiter?.resume(returning: connection)
    }

    /// Frees a slot: a waiter (if any) opens its own connection in it.
    private func releaseSlot() {
        let waiter = state.withLock { state -> CheckedContinuation<PostgresConnection?, Never>? in
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            state.open -= 1
            return nil
        }
        waiter?.resume(returning: nil)
    }
}
