import CodexCore
import Foundation
import Synchronization

/// The numbers a turn's usage-ledger records get: 0, 1, 2, … in one drive; a resumed durable turn
/// continues after the highest number its earlier drives stored.
final class TurnUsageNumbers: Sendable {
    private let next = Mutex<Int?>(nil)

    /// Sets where numbering starts, once (a drive restarted within one turn keeps counting).
    func start(at first: Int) {
        next.withLock { if $0 == nil { $0 = first } }
    }

    /// The next number.
    func take() -> Int {
        next.withLock { next in
            let number = next ?? 0
            next = number + 1
            return number
        }
    }
}

extension TurnDriver {
    /// Adds one response's usage to the state store's ledger (persistent turns, stores that keep one),
    /// through the ordered write queue: before the turn's commit, never waited for. A ledger write that
    /// fails is logged and does not fail the turn.
    func recordUsage(_ usage: AgentUsage) {
        guard plan.persistent, runtime.writer.keepsUsage else { return }
        let record = AgentUsageRecord(
            threadID: plan.threadID, turnID: plan.turnID, sequence: usageNumbers.take(), accountBinding: plan.thread.accountBinding,
            model: plan.backendRequest.model.rawValue, recordedAt: runtime.configuration.wallClock.now(), usage: usage
        )
        let logSink = runtime.configuration.logSink
        let turnID = plan.turnID.rawValue
        runtime.writer.enqueueUsage([record]) { error in
            logSink.record(AgentLogEvent(
                level: .warning, category: .persistence, name: "runtime.usage.record_failed",
                metadata: ["turn_id": turnID, "error_code": error.code.rawValue]
            ))
        }
    }

    /// A resumed durable turn's records continue after the highest number its earlier drives stored
    /// (read before the drive sends anything). When that read fails, numbering starts at the current
    /// time in milliseconds, far above any count, so no earlier record is replaced.
    func numberUsageAfterEarlierDrives() async {
        guard plan.persistent, runtime.writer.keepsUsage else { return }
        do {
            let earlier = try await runtime.writer.readUsage(AgentUsageQuery(turnID: plan.turnID))
            usageNumbers.start(at: (earlier.map(\.sequence).max() ?? -1) + 1)
        } catch {
            usageNumbers.start(at: Int(max(0, runtime.configuration.wallClock.now().timeIntervalSince1970) * 1000))
            runtime.configuration.logSink.record(AgentLogEvent(
                level: .warning, category: .persistence, name: "runtime.usage.read_failed",
                metadata: ["turn_id": plan.turnID.rawValue, "error_code": (error as? AgentRuntimeError)?.code.rawValue ?? "storage_failure"]
            ))
        }
    }
}
