import CodexCore
import CodexKitTesting
import Foundation
import Synchronization
import Testing

/// `sleepInSlices(for:)`: waits of at most a second against one deadline fixed at the start.
@Suite struct ClockSlicesTests {
    /// A manual clock that records the deadline of every wait.
    final class RecordingClock: Clock, Sendable {
        let base = ManualClock()
        private let deadlines = Mutex<[Duration]>([])
        var now: ManualClock.Instant { base.now }
        var minimumResolution: Duration { .zero }
        var recorded: [Duration] { deadlines.withLock { $0 } }

        func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
            deadlines.withLock { $0.append(deadline.offset) }
            try await base.sleep(until: deadline, tolerance: tolerance)
        }
    }

    @Test func waitsInOneSecondSlicesUpToTheDeadline() async throws {
        let clock = RecordingClock()
        let sleeper = Task { try await clock.sleepInSlices(for: .milliseconds(3_500)) }
        for step in [Duration.seconds(1), .seconds(1), .seconds(1)] {
            await clock.base.waitForSleepers(count: 1)
            clock.base.advance(by: step)
        }
        await clock.base.waitForSleepers(count: 1)
        clock.base.advance(by: .milliseconds(499))
        await clock.base.waitForSleepers(count: 1)
        clock.base.advance(by: .milliseconds(1))
        try await sleeper.value
        #expect(clock.recorded == [.seconds(1), .seconds(2), .seconds(3), .milliseconds(3_500)])
    }

    @Test func oneAdvancePastTheDeadlineEndsTheWait() async throws {
        let clock = RecordingClock()
        let sleeper = Task { try await clock.sleepInSlices(for: .seconds(300)) }
        await clock.base.waitForSleepers(count: 1)
        clock.base.advance(by: .seconds(301))
        try await sleeper.value
        #expect(clock.recorded == [.seconds(1)])
    }

    @Test func cancellationEndsTheWait() async {
        let clock = RecordingClock()
        let sleeper = Task { try await clock.sleepInSlices(for: .seconds(300)) }
        await clock.base.waitForSleepers(count: 1)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
