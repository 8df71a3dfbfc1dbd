package import CodexCore
import Synchronization

/// Appends a durable turn's journal entries in order: each gets the next sequence number and goes
/// through the runtime's ordered write queue, and ``record(_:)`` returns once it is durable. Entries of
/// parallel tool calls are numbered in the order they are recorded.
final class TurnJournalWriter: Sendable {
    let turn: AgentTurnID
    let thread: AgentThreadID
    private let writer: RuntimeStateWriter
    private let next: Mutex<Int>

    /// A writer whose next entry is number `nextSequence` (the journal's length).
    init(writer: RuntimeStateWriter, turn: AgentTurnID, thread: AgentThreadID, nextSequence: Int) {
        self.writer = writer
        self.turn = turn
        self.thread = thread
        next = Mutex(nextSequence)
    }

    /// Records `entry` durably, after every entry recorded before it.
    /// - Throws: ``TurnJournalFailure`` when the store could not record it (the turn stays resumable), or
    ///   `CancellationError` when the caller is cancelled while it waits (the write still happens).
    func record(_ entry: TurnJournalEntry) async throws {
        let turn = self.turn
        let thread = self.thread
        let (handle, sequence) = next.withLock { next in
            let sequence = next
            next += 1
            return (writer.enqueueJournal { journal in try await journal.appendJournal(entry, sequence: sequence, turn: turn, thread: thread) }, sequence)
        }
        do {
            try await writer.wait(handle)
        } catch let error as AgentRuntimeError {
            throw TurnJournalFailure(error: error)
        }
        TurnJournalHooks.recorded(entry, sequence: sequence)
    }
}

/// A durable turn's journal could not be written: the turn ends with the store's error and is left
/// resumable (nothing it committed is lost; ``AgentRuntime/resumeTurn(_:in:)`` continues it once the
/// store works again).
struct TurnJournalFailure: Error {
    let error: AgentRuntimeError
}

/// The package's test hook on durable turns: crash fixtures install an observer that kills the process
/// at a chosen journal boundary. Never set in production code.
package enum TurnJournalHooks {
    /// Behind a reference: read after every entry (see ``SendableReference``).
    private static let observer = Mutex<SendableReference<@Sendable (TurnJournalEntry, Int) -> Void>?>(nil)

    /// Installs `observe`, called after each journal entry is durable with the entry and its sequence
    /// number (`nil` removes it).
    package static func install(_ observe: (@Sendable (TurnJournalEntry, Int) -> Void)?) {
        observer.withLock { $0 = observe.map(SendableReference.init) }
    }

    static func recorded(_ entry: TurnJournalEntry, sequence: Int) {
        observer.withLock { $0 }?.value(entry, sequence)
    }
}
