import CodexCore
import CodexKitTesting
import CodexTestSupport
@testable import CodexTransport
import Synchronization
import Testing

/// The four timeouts of one exchange as a table: for each script of events (at elapsed seconds), the
/// deadline that is nearest afterwards and what fires at each probe time. Written out independently
/// of the code; every row is one exchange.
@Suite struct TransferDeadlinesTests {
    /// One change to the exchange at an elapsed time, in seconds.
    enum Step {
        case bodySent(Int)
        case headers(Int)
        case activity(Int)
        case pause
        case resume(Int)
        case finish
    }

    struct Row: CustomTestStringConvertible, Sendable {
        let name: String
        let hasBody: Bool
        let total: Int?
        let steps: [Step]
        /// The nearest deadline after the steps: (seconds, kind), or nil.
        let nearest: (Int, TransferDeadlines.Kind)?
        /// Probes after the steps: at each time, what fires (nil: nothing yet).
        let probes: [(Int, TransferDeadlines.Kind?)]
        var testDescription: String { name }
    }

    // Timeouts of every row: connect 10 s, first byte 60 s, idle 30 s, total as the row says.
    static let rows: [Row] = [
        Row(name: "sending: connect is nearest", hasBody: true, total: nil, steps: [], nearest: (10, .connect),
            probes: [(9, nil), (10, .connect), (11, nil)]),
        Row(name: "no body: first byte from the start", hasBody: false, total: nil, steps: [], nearest: (60, .firstByte),
            probes: [(59, nil), (60, .firstByte)]),
        Row(name: "body sent: first byte, counted from the start", hasBody: true, total: nil, steps: [.bodySent(5)], nearest: (60, .firstByte),
            probes: [(30, nil), (60, .firstByte)]),
        Row(name: "streaming: idle from the last activity", hasBody: true, total: nil, steps: [.bodySent(1), .headers(2), .activity(20)],
            nearest: (50, .idle), probes: [(49, nil), (50, .idle)]),
        Row(name: "headers make idle nearer than first byte", hasBody: false, total: nil, steps: [.headers(1)], nearest: (31, .idle),
            probes: [(30, nil), (31, .idle)]),
        Row(name: "paused: the idle clock stops", hasBody: false, total: nil, steps: [.headers(1), .pause], nearest: nil,
            probes: [(500, nil)]),
        Row(name: "paused with a total: only the total", hasBody: false, total: 120, steps: [.headers(1), .pause], nearest: (120, .total),
            probes: [(119, nil), (120, .total)]),
        Row(name: "resumed: idle restarts at the resume", hasBody: false, total: nil, steps: [.headers(1), .pause, .resume(100)],
            nearest: (130, .idle), probes: [(129, nil), (130, .idle)]),
        Row(name: "total nearer than idle", hasBody: false, total: 40, steps: [.headers(1), .activity(30)], nearest: (40, .total),
            probes: [(39, nil), (40, .total)]),
        Row(name: "total nearer than connect", hasBody: true, total: 5, steps: [], nearest: (5, .total), probes: [(5, .total)]),
        Row(name: "finished: nothing fires", hasBody: false, total: 10, steps: [.headers(1), .finish], nearest: nil, probes: [(1_000, nil)]),
        Row(name: "headers after finish change nothing", hasBody: false, total: nil, steps: [.finish, .headers(1)], nearest: nil, probes: [(1_000, nil)]),
    ]

    @Test(arguments: rows)
    func theNearestDeadlineAndWhatFiresFollowTheTable(_ row: Row) {
        var deadlines = TransferDeadlines(
            timeouts: HTTPTimeouts(connect: .seconds(10), firstByte: .seconds(60), idle: .seconds(30), total: row.total.map { .seconds($0) }),
            hasBody: row.hasBody
        )
        for step in row.steps {
            switch step {
            case .bodySent(let at): deadlines.bodySent(at: .seconds(at))
            case .headers(let at): deadlines.headersReceived(at: .seconds(at))
            case .activity(let at): deadlines.activity(at: .seconds(at))
            case .pause: deadlines.pause()
            case .resume(let at): deadlines.resume(at: .seconds(at))
            case .finish: deadlines.finish()
            }
        }
        let nearest = deadlines.nearest()
        #expect(nearest?.at == row.nearest.map { .seconds($0.0) })
        #expect(nearest?.kind == row.nearest?.1)
        // Probes in order on one copy: a timeout fires once, and nothing after it.
        var probed = deadlines
        for (at, kind) in row.probes {
            #expect(probed.expire(at: .seconds(at)) == kind, "at \(at) s")
        }
    }

    @Test func eachKindNamesItsLimitInTheError() {
        let deadlines = TransferDeadlines(
            timeouts: HTTPTimeouts(connect: .seconds(10), firstByte: .seconds(60), idle: .seconds(30), total: .seconds(90)), hasBody: true
        )
        #expect(deadlines.error(for: .connect).message == "the connect timeout of 10.0 seconds passed")
        #expect(deadlines.error(for: .firstByte).message == "the first byte timeout of 60.0 seconds passed")
        #expect(deadlines.error(for: .idle).message == "the idle timeout of 30.0 seconds passed")
        #expect(deadlines.error(for: .total).message == "the total timeout of 90.0 seconds passed")
        #expect(deadlines.error(for: .idle).code == .timedOut)
    }
}

/// The watchdogs and their client's scheduler on a manual clock: one sleep per deadline for all the
/// client's exchanges (no polling, no task per exchange), woken early only when a deadline moves
/// earlier or a new exchange is due sooner; a finished exchange costs no wake-up.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct TransferWatchdogTests {
    /// A timer on `clock` that counts the sleeps it is asked for.
    private static func timer(_ clock: ManualClock, sleeps: Counter) -> ElapsedTimer {
        let start = clock.now
        return ElapsedTimer(
            elapsed: { start.duration(to: clock.now) },
            sleepUntil: { mark in
                sleeps.increment()
                try await clock.sleep(until: start.advanced(by: mark), tolerance: nil)
            }
        )
    }

    /// A manual clock, a count of the sleeps asked of it, and a scheduler on it.
    private static func rig() -> (ManualClock, Counter, DeadlineScheduler) {
        let clock = ManualClock()
        let sleeps = Counter()
        return (clock, sleeps, DeadlineScheduler(timer: timer(clock, sleeps: sleeps)))
    }

    final class Counter: Sendable {
        private let value = Mutex(0)
        func increment() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
    }

    /// The timeouts that fired, in order, by exchange name.
    final class Fired: Sendable {
        private let list = Mutex<[String]>([])
        func record(_ name: String, _ kind: TransferDeadlines.Kind) { list.withLock { $0.append("\(name): \(kind.rawValue)") } }
        var all: [String] { list.withLock { $0 } }
    }

    private static func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }

    @Test func itSleepsOnceUntilTheNearestDeadlineAndFiresThere() async {
        let (clock, sleeps, scheduler) = Self.rig()
        let fired = Fired()
        let watchdog = TransferWatchdog(
            timeouts: HTTPTimeouts(connect: .seconds(10), firstByte: .seconds(60), idle: .seconds(30)), hasBody: false, scheduler: scheduler
        )
        watchdog.start { kind, _ in fired.record("a", kind) }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(59))
        await Task.yield()
        #expect(fired.all.isEmpty)
        #expect(sleeps.count == 1, "one sleep for the first-byte deadline, not one per quantum")
        clock.advance(by: .seconds(1))
        await Self.until { !fired.all.isEmpty }
        #expect(fired.all == ["a: first byte"])
        // Nothing is left to watch: the task ends without another sleep.
        await Self.until { !scheduler.load.running }
        #expect(sleeps.count == 1)
        #expect(clock.sleeperCount == 0)
    }

    @Test func headersThatBringAnEarlierIdleDeadlineWakeTheSleep() async {
        let (clock, sleeps, scheduler) = Self.rig()
        let fired = Fired()
        let watchdog = TransferWatchdog(
            timeouts: HTTPTimeouts(connect: .seconds(10), firstByte: .seconds(60), idle: .seconds(5)), hasBody: false, scheduler: scheduler
        )
        watchdog.start { kind, _ in fired.record("a", kind) }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        watchdog.update { deadlines, now in deadlines.headersReceived(at: now) }
        // The first-byte sleep is woken and a sleep until 6 s is armed.
        await Self.until { sleeps.count == 2 }
        await clock.waitForSleepers(count: 1)
        // Chunks only move the idle deadline later: no new sleep.
        clock.advance(by: .seconds(2))
        watchdog.update { deadlines, now in deadlines.activity(at: now) }
        #expect(sleeps.count == 2)
        clock.advance(by: .seconds(3))  // 6 s: the armed sleep ends, finds idle due at 8 s, sleeps again
        await Self.until { sleeps.count == 3 }
        #expect(fired.all.isEmpty)
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(2))
        await Self.until { !fired.all.isEmpty }
        #expect(fired.all == ["a: idle"])
        #expect(sleeps.count == 3)
    }

    @Test func aFinishedExchangeIsForgottenWithoutAWakeAndTheTaskEndsAtTheArmedDeadline() async {
        let (clock, sleeps, scheduler) = Self.rig()
        let watchdog = TransferWatchdog(timeouts: HTTPTimeouts(), hasBody: true, scheduler: scheduler)
        watchdog.start { _, _ in Issue.record("nothing fires after the finish") }
        await clock.waitForSleepers(count: 1)
        watchdog.update { deadlines, _ in deadlines.finish() }
        #expect(scheduler.load.watched == 0)
        #expect(scheduler.load.running)
        #expect(clock.sleeperCount == 1, "a finish does not wake the scheduler")
        clock.advance(by: .seconds(30))  // the connect deadline the sleep was armed for
        await Self.until { !scheduler.load.running }
        #expect(clock.sleeperCount == 0)
        #expect(sleeps.count == 1)
    }

    @Test func aPausedExchangeWithNoDeadlineLeftEndsTheTaskWhenItFinishes() async {
        let (clock, sleeps, scheduler) = Self.rig()
        let watchdog = TransferWatchdog(timeouts: HTTPTimeouts(idle: .seconds(5)), hasBody: false, scheduler: scheduler)
        watchdog.start { _, _ in Issue.record("a paused exchange is not idle") }
        await clock.waitForSleepers(count: 1)
        watchdog.update { deadlines, now in
            deadlines.headersReceived(at: now)
            deadlines.pause()
        }
        // No deadline runs now: the scheduler sleeps without a timer once the first-byte sleep ends.
        clock.advance(by: .seconds(300))
        await Self.until { sleeps.count == 1 && clock.sleeperCount == 0 }
        clock.advance(by: .seconds(600))
        #expect(scheduler.load.running)
        watchdog.update { deadlines, _ in deadlines.finish() }
        await Self.until { !scheduler.load.running }
        #expect(sleeps.count == 1)
    }

    @Test func aClientsExchangesShareOneSleepAndFireInDeadlineOrder() async {
        let (clock, sleeps, scheduler) = Self.rig()
        let fired = Fired()
        let slow = TransferWatchdog(timeouts: HTTPTimeouts(firstByte: .seconds(60)), hasBody: false, scheduler: scheduler)
        slow.start { kind, _ in fired.record("slow", kind) }
        // Due at 92 s: the scheduler wakes there, when the one below has run 87 s of its 90.
        let probe = TransferWatchdog(timeouts: HTTPTimeouts(firstByte: .seconds(92)), hasBody: false, scheduler: scheduler)
        probe.start { kind, _ in fired.record("probe", kind) }
        await clock.waitForSleepers(count: 1)
        // Started 5 s later: its 90 s run from there, to 95 s on the scheduler's time.
        clock.advance(by: .seconds(5))
        let later = TransferWatchdog(timeouts: HTTPTimeouts(firstByte: .seconds(90)), hasBody: false, scheduler: scheduler)
        later.start { kind, _ in fired.record("later", kind) }
        // Due after the armed deadline: no wake, still one sleep.
        #expect(sleeps.count == 1)
        let soon = TransferWatchdog(timeouts: HTTPTimeouts(firstByte: .seconds(10)), hasBody: false, scheduler: scheduler)
        soon.start { kind, _ in fired.record("soon", kind) }
        // Due at 15 s, before it: the sleep is re-armed.
        await Self.until { sleeps.count == 2 }
        await clock.waitForSleepers(count: 1)
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(9))  // 14 s
        await Task.yield()
        #expect(fired.all.isEmpty)
        clock.advance(by: .seconds(1))  // 15 s
        await Self.until { fired.all.count >= 1 }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(45))  // 60 s
        await Self.until { fired.all.count >= 2 }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(32))  // 92 s
        await Self.until { fired.all.count >= 3 }
        await clock.waitForSleepers(count: 1)
        #expect(fired.all.count == 3)
        clock.advance(by: .seconds(3))  // 95 s
        await Self.until { fired.all.count >= 4 }
        #expect(fired.all == ["soon: first byte", "slow: first byte", "probe: first byte", "later: first byte"])
        await Self.until { !scheduler.load.running }
        #expect(sleeps.count == 5)
    }
}

/// Many exchanges on one scheduler, changed from concurrent tasks, against a model: each keeps its own
/// ``TransferDeadlines`` copy, changed identically at the same instants. Every timeout must fire at
/// the exact second the model says, with the model's kind, once, and none early.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct DeadlineSchedulerModelTests {
    /// One change an exchange gets in a second.
    enum Change {
        case none, headers, activity, pause, resume, finish

        /// Mostly progress, sometimes a pause or a resume, rarely the end.
        static func random(_ generator: inout SplitMix64) -> Change {
            switch generator.next() % 24 {
            case 0: .finish
            case 1...3: .pause
            case 4...6: .resume
            case 7...9: .headers
            case 10...15: .activity
            default: .none
            }
        }
    }

    final class Exchange: Sendable {
        let name: Int
        let watchdog: TransferWatchdog
        let model: Mutex<TransferDeadlines>
        /// When the exchange started, on the scheduler's time (whole seconds in this test).
        let startedAt: Duration
        init(name: Int, timeouts: HTTPTimeouts, hasBody: Bool, scheduler: DeadlineScheduler) {
            self.name = name
            startedAt = scheduler.now
            watchdog = TransferWatchdog(timeouts: timeouts, hasBody: hasBody, scheduler: scheduler)
            model = Mutex(TransferDeadlines(timeouts: timeouts, hasBody: hasBody))
        }
    }

    final class Log: Sendable {
        private let fired = Mutex<[String]>([])
        func record(_ line: String) { fired.withLock { $0.append(line) } }
        var lines: [String] { fired.withLock { $0 } }
    }

    @Test func everyTimeoutFiresAtItsSecondOnceAndNoneEarly() async {
        let clock = ManualClock()
        let start = clock.now
        let timer = ElapsedTimer(
            elapsed: { start.duration(to: clock.now) },
            sleepUntil: { mark in try await clock.sleep(until: start.advanced(by: mark), tolerance: nil) }
        )
        let scheduler = DeadlineScheduler(timer: timer)
        let log = Log()
        var generator = SplitMix64(seed: 0xDEAD_11E5)
        var exchanges: [Exchange] = []
        var expected: [String] = []
        var second = 0

        /// Waits until the scheduler is asleep on the deadline it armed (or without one), or has ended.
        func settled() async {
            while true {
                let load = scheduler.load
                if !load.running { return }
                if load.parked, load.armedAt == nil || clock.sleeperCount == 1 { return }
                await Task.yield()
            }
        }

        for tick in 0..<150 {
            second = tick
            // New exchanges: a few each second for the first 100 seconds.
            if tick < 100 {
                for _ in 0..<Int(generator.next() % 4) {
                    let timeouts = HTTPTimeouts(
                        connect: .seconds(Int64(generator.next() % 8 + 1)), firstByte: .seconds(Int64(generator.next() % 30 + 1)),
                        idle: .seconds(Int64(generator.next() % 12 + 1)), total: generator.next() % 4 == 0 ? .seconds(Int64(generator.next() % 60 + 5)) : nil
                    )
                    let exchange = Exchange(name: exchanges.count, timeouts: timeouts, hasBody: generator.next() % 2 == 0, scheduler: scheduler)
                    exchanges.append(exchange)
                    let name = exchange.name
                    exchange.watchdog.start { kind, _ in log.record("\(name) \(kind.rawValue)") }
                }
            }
            // Changes, applied from concurrent tasks; the model gets the same change at the same time.
            let now = Duration.seconds(tick)
            let changes = exchanges.map { ($0, Change.random(&generator)) }
            await withTaskGroup(of: Void.self) { group in
                for (exchange, change) in changes where change != .none {
                    group.addTask {
                        let apply: (inout TransferDeadlines, Duration) -> Void = { deadlines, at in
                            switch change {
                            case .none: break
                            case .headers: deadlines.bodySent(at: at); deadlines.headersReceived(at: at)
                            case .activity: deadlines.activity(at: at)
                            case .pause: deadlines.pause()
                            case .resume: deadlines.resume(at: at)
                            case .finish: deadlines.finish()
                            }
                        }
                        exchange.model.withLock { apply(&$0, now - exchange.startedAt) }
                        exchange.watchdog.update(apply)
                    }
                }
            }
            await settled()
            clock.advance(by: .seconds(1))
            // What the model says fires at the new second.
            for exchange in exchanges {
                let kind = exchange.model.withLock { $0.expire(at: .seconds(tick + 1) - exchange.startedAt) }
                if let kind { expected.append("\(exchange.name) \(kind.rawValue)") }
            }
            // Asleep again on its next deadline: what was due has fired (the callbacks run before it
            // sleeps), and a deadline it missed would not fire now.
            await settled()
            #expect(log.lines.sorted() == expected.sorted(), "at second \(tick + 1)")
            if log.lines.sorted() != expected.sorted() { break }
        }
        #expect(second == 149)
        #expect(exchanges.count == 158)
        #expect(expected.count == 86)
    }
}
