import CodexCore
import CodexKitTesting
import Foundation
import Testing

@Suite struct ManualClockTests {
    @Test func sleepersResumeOnlyWhenTimeReachesTheirDeadline() async throws {
        let clock = ManualClock()
        let order = OrderLog()
        let first = Task { try await clock.sleep(for: .seconds(4)); order.append("4s") }
        let second = Task { try await clock.sleep(for: .seconds(1)); order.append("1s") }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .milliseconds(999))
        #expect(clock.sleeperCount == 2)
        clock.advance(by: .milliseconds(1))
        try await second.value
        #expect(order.entries == ["1s"])
        clock.advance(by: .seconds(3))
        try await first.value
        #expect(order.entries == ["1s", "4s"])
        #expect(clock.now.offset == .seconds(4))
    }

    @Test func aPastDeadlineReturnsAtOnce() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(10))
        try await clock.sleep(until: ManualClock.Instant(offset: .seconds(5)))
        #expect(clock.sleeperCount == 0)
    }

    @Test func cancellingASleeperThrowsCancellationError() async {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(for: .seconds(60)) }
        await clock.waitForSleepers(count: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func waitingForSleepersEndsWhenTheWaiterIsCancelled() async {
        // Nobody ever sleeps: without cancellation the wait would spin until the process is killed.
        let clock = ManualClock()
        let waiter = Task { await clock.waitForSleepers(count: 1) }
        waiter.cancel()
        await waiter.value
        #expect(clock.sleeperCount == 0)
    }

    @Test func wallClocksCanGoBackwards() {
        let wall = ManualWallClock(Date(timeIntervalSince1970: 1_000))
        wall.advance(by: -500)
        #expect(wall.now() == Date(timeIntervalSince1970: 500))
        wall.set(Date(timeIntervalSince1970: 7))
        #expect(wall.now().timeIntervalSince1970 == 7)
        #expect(abs(SystemWallClock().now().timeIntervalSinceNow) < 60)
    }
}

/// A thread-safe list of strings for ordering assertions.
final class OrderLog: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var storage: [String] = []

    func append(_ entry: String) {
        lock.lock()
        storage.append(entry)
        lock.unlock()
    }

    var entries: [String] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
