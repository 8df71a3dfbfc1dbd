import CodexTestSupport
@testable import CodexTransport
import Testing

/// The libcurl body hand-off as a pure state machine, without threads: what each offer, read, release,
/// end and cancel does, with plain numbers standing in for the waiting readers.
@Suite struct PausingBodyStateTests {
    typealias State = PausingBodyState<Int>

    static func chunk(_ count: Int, _ byte: UInt8 = 0x61) -> [UInt8] { [UInt8](repeating: byte, count: count) }

    /// The chunk a take hands over and its resume flag, or `nil` for anything else.
    static func taken(_ action: PausingBodyTake) -> ([UInt8], Bool)? {
        if case .chunk(let bytes, let resume) = action { return (bytes, resume) }
        return nil
    }

    static func waits(_ action: PausingBodyTake) -> Bool? {
        if case .wait(let resume) = action { return resume }
        return nil
    }

    @Test func aChunkNobodyWaitsForIsHeldWithoutARelease() throws {
        var state = State(limit: 64)
        #expect(state.offer(Self.chunk(10)) == .stored(release: false))
        #expect(state.bufferedBytes == 10)
        #expect(state.release() == nil)
        let first = Self.taken(state.take(1))
        let (bytes, resume) = try #require(first)
        #expect(bytes == Self.chunk(10))
        #expect(!resume)
        #expect(state.bufferedBytes == 0)
    }

    @Test func aWaitingReaderAsksOneReleasePerWaitAndGetsTheOldestChunk() throws {
        var state = State(limit: 64)
        #expect(Self.waits(state.take(7)) == false)
        #expect(state.offer(Self.chunk(10, 1)) == .stored(release: true))
        #expect(state.offer(Self.chunk(10, 2)) == .stored(release: false))
        let released = state.release()
        let (waiter, action) = try #require(released)
        #expect(waiter == 7)
        #expect(Self.taken(action)?.0 == Self.chunk(10, 1))
        // The second chunk is there for the next read, which does not wait.
        #expect(Self.taken(state.take(8))?.0 == Self.chunk(10, 2))
        // A second release in the same pass finds nobody waiting.
        #expect(state.release() == nil)
        // The next wait asks again.
        #expect(Self.waits(state.take(9)) == false)
        #expect(state.offer(Self.chunk(1)) == .stored(release: true))
        #expect(state.release()?.0 == 9)
    }

    @Test func halfABufferWhileAReaderWaitsIsReleasedAtOnce() {
        var state = State(limit: 64)
        _ = state.take(1)
        #expect(state.offer(Self.chunk(16)) == .stored(release: true))
        #expect(state.offer(Self.chunk(15)) == .stored(release: false))
        #expect(state.offer(Self.chunk(1)) == .releaseNow)
        #expect(state.release()?.0 == 1)
        // Nobody waits now: further chunks are held without asking.
        #expect(state.offer(Self.chunk(16)) == .stored(release: false))
        #expect(state.bufferedBytes == 32)
    }

    @Test func pastTheLimitTheTransferPausesAndResumesOnceHalfIsDrained() {
        var state = State(limit: 64)
        for _ in 0..<4 { #expect(state.offer(Self.chunk(16)) == .stored(release: false)) }
        #expect(state.offer(Self.chunk(16)) == .pause)
        #expect(state.paused)
        #expect(state.bufferedBytes == 64)
        #expect(Self.taken(state.take(1))?.1 == false)  // 48 held
        #expect(Self.taken(state.take(1))?.1 == true)   // 32 held: half
        #expect(!state.paused)
        #expect(Self.taken(state.take(1))?.1 == false)
    }

    @Test func aReaderThatWaitsWhilePausedResumesTheTransfer() {
        var state = State(limit: 16)
        #expect(state.offer(Self.chunk(16)) == .stored(release: false))
        #expect(state.offer(Self.chunk(16)) == .pause)
        // A chunk larger than the limit is held alone rather than never delivered.
        var large = State(limit: 16)
        #expect(large.offer(Self.chunk(40)) == .stored(release: false))
        #expect(large.peakBufferedBytes == 40)
        #expect(Self.taken(state.take(1))?.1 == true)
        #expect(Self.waits(state.take(2)) == false)
    }

    @Test func anEndWithChunksHeldHandsTheWaiterAChunkAndTheRestFollow() throws {
        var state = State(limit: 64)
        _ = state.take(3)
        #expect(state.offer(Self.chunk(5, 1)) == .stored(release: true))
        #expect(state.offer(Self.chunk(5, 2)) == .stored(release: false))
        let ended = state.finish(nil, discardingHeld: false)
        let (waiter, action) = try #require(ended)
        #expect(waiter == 3)
        #expect(Self.taken(action)?.0 == Self.chunk(5, 1))
        #expect(state.offer(Self.chunk(1)) == .reject)
        #expect(Self.taken(state.take(4))?.0 == Self.chunk(5, 2))
        guard case .end = state.take(5) else { Issue.record("expected the end"); return }
        #expect(state.release() == nil)
    }

    @Test func aTimeoutDropsWhatIsHeldAndFailsTheWaiterNow() throws {
        struct Expired: Error {}
        var state = State(limit: 64)
        _ = state.take(3)
        #expect(state.offer(Self.chunk(5)) == .stored(release: true))
        let ended = state.finish(Expired(), discardingHeld: true)
        let (waiter, action) = try #require(ended)
        #expect(waiter == 3)
        guard case .fail(let error) = action else { Issue.record("expected a failure"); return }
        #expect(error is Expired)
        #expect(state.bufferedBytes == 0)
        guard case .fail = state.take(4) else { Issue.record("expected the failure again"); return }
    }

    @Test func aCancelDropsEverythingAndStopsARunningTransferOnce() {
        var state = State(limit: 64)
        #expect(state.offer(Self.chunk(5)) == .stored(release: false))
        #expect(Self.taken(state.take(1))?.0.count == 5)
        #expect(Self.waits(state.take(2)) == false)
        let first = state.cancel()
        #expect(first.waiter == 2)
        #expect(first.stopTransfer)
        let second = state.cancel()
        #expect(second.waiter == nil)
        #expect(!second.stopTransfer)
        #expect(state.offer(Self.chunk(1)) == .reject)
        #expect(state.release() == nil)
    }

    @Test func bytesHeldNeverExceedTheLimitOrTheLargestChunkAndNothingIsLostOrReordered() {
        // A fixed pseudo-random script of offers, reads and releases; each chunk carries its sequence
        // number, so the reads must see 0, 1, 2, … with nothing skipped.
        var generator = SplitMix64(seed: 0x5EED)
        var state = State(limit: 1_000)
        var nextToSend = 0
        var nextToRead = 0
        var largest = 0
        var waiting = false
        for _ in 0..<20_000 {
            switch generator.next() % 3 {
            case 0:
                let size = Int(generator.next() % 700) + 1
                switch state.offer([UInt8(truncatingIfNeeded: nextToSend)] + Self.chunk(size - 1)) {
                case .stored, .releaseNow:
                    largest = max(largest, size)
                    nextToSend += 1
                case .pause: break
                case .reject: Issue.record("rejected while open")
                }
            case 1:
                guard !waiting else { continue }
                switch state.take(nextToRead) {
                case .chunk(let bytes, _):
                    #expect(bytes.first == UInt8(truncatingIfNeeded: nextToRead))
                    nextToRead += 1
                case .wait: waiting = true
                case .end, .fail: Issue.record("ended while open")
                }
            default:
                guard let (waiter, action) = state.release() else { continue }
                #expect(waiter == nextToRead)
                #expect(Self.taken(action)?.0.first == UInt8(truncatingIfNeeded: nextToRead))
                nextToRead += 1
                waiting = false
            }
            #expect(state.bufferedBytes <= max(1_000, largest))
        }
        // Drain: whatever is held reaches a reader, in order, and then the reader waits.
        if waiting, let (waiter, action) = state.release() {
            #expect(waiter == nextToRead)
            #expect(Self.taken(action)?.0.first == UInt8(truncatingIfNeeded: nextToRead))
            nextToRead += 1
            waiting = false
        }
        while !waiting {
            switch state.take(nextToRead) {
            case .chunk(let bytes, _):
                #expect(bytes.first == UInt8(truncatingIfNeeded: nextToRead))
                nextToRead += 1
            default: waiting = true
            }
        }
        #expect(nextToSend > 1_000)
        #expect(nextToRead == nextToSend)
        #expect(state.bufferedBytes == 0)
        #expect(state.peakBufferedBytes <= max(1_000, largest))
    }
}
