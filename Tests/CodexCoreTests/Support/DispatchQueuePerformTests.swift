@testable import CodexCore
import Dispatch
import Synchronization
import Testing

/// `DispatchQueue.perform`: the body runs on the queue, its result or typed error comes back, and what it
/// captured is let go before the caller resumes (so a store released right after its last call has
/// closed its files by then).
@Suite struct DispatchQueuePerformTests {
    private final class Flag: Sendable { let released = Atomic(false) }
    private final class Canary: Sendable {
        let flag: Flag
        init(_ flag: Flag) { self.flag = flag }
        deinit { flag.released.store(true, ordering: .sequentiallyConsistent) }
    }
    private struct Refused: Error, Equatable { let code: Int }

    @Test func aBodyReleasesWhatItCapturedWhenItHasRunThoughItsWorkIsStillHeld() throws {
        let flag = Flag()
        var canary: Canary? = Canary(flag)
        let work = try #require(canary.map { held in QueuedWork { () throws(Refused) -> Int in withExtendedLifetime(held) { 42 } } })
        canary = nil
        #expect(flag.released.load(ordering: .sequentiallyConsistent) == false)
        #expect(try work.run()?.get() == 42)
        // The work is still referenced here, as the queue's block references it, and its body is gone.
        #expect(flag.released.load(ordering: .sequentiallyConsistent) == true)
        #expect(work.run() == nil, "a second run finds nothing to run")
    }

    @Test func theResultAndTheTypedErrorComeBackFromTheQueue() async throws {
        let queue = DispatchQueue(label: "codexkit.test.perform")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let seen = try await queue.perform { () throws(Refused) -> Int? in DispatchQueue.getSpecific(key: key) }
        #expect(seen == 7)
        let failure = await #expect(throws: Refused.self) {
            try await queue.perform { () throws(Refused) -> Int in throw Refused(code: 3) }
        }
        #expect(failure == Refused(code: 3))
    }

    /// Through the queue: the caller checks at once, while the queue's block may not have returned yet.
    /// Resuming from a block that still held the body failed this in each of three runs (200 calls each);
    /// the unit test above is the deterministic one.
    @Test func whatTheBodyCapturedIsGoneWhenTheCallerResumes() async throws {
        let queue = DispatchQueue(label: "codexkit.test.perform")
        for _ in 0..<200 {
            let flag = Flag()
            let value = try await queue.perform(Self.body(holding: Canary(flag)))
            #expect(value == 1)
            #expect(flag.released.load(ordering: .sequentiallyConsistent) == true)
        }
    }

    /// A body whose only reference to `canary` is its capture.
    private static func body(holding canary: Canary) -> @Sendable () throws(Refused) -> Int {
        { () throws(Refused) -> Int in withExtendedLifetime(canary) { 1 } }
    }
}
