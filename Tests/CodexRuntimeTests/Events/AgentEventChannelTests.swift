@testable import CodexRuntime
import CodexTestSupport
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct AgentEventChannelTests {
    @Test func tenThousandEventsThroughCapacityTwoWithAPausedConsumerArriveInOrder() async throws {
        let channel = AgentEventChannel<Int>(capacity: 2)
        let producer = Task {
            for value in 0..<10_000 { try await channel.send(value) }
            channel.finish()
        }
        // The consumer is paused: the producer fills the queue, then must wait.
        let deadline = ContinuousClock.now + .hangGuard
        while channel.peakBufferedCount < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(20))
        #expect(channel.peakBufferedCount == 2)
        var received: [Int] = []
        while let value = try await channel.next() { received.append(value) }
        try await producer.value
        #expect(received == Array(0..<10_000))
        #expect(channel.peakBufferedCount == 2)
    }

    @Test func lifecycleEventsUseUpToFourReservedSlotsOfAFullQueue() async throws {
        let channel = AgentEventChannel<String>(capacity: 2)
        try await channel.send("a")
        try await channel.send("b")
        for index in 0..<4 { try channel.sendLifecycle("end \(index)") }
        #expect(throws: AgentEventChannel<String>.SendFailure.lifecycleSlotsExhausted) { try channel.sendLifecycle("too many") }
        channel.finish()
        var received: [String] = []
        while let value = try await channel.next() { received.append(value) }
        #expect(received == ["a", "b", "end 0", "end 1", "end 2", "end 3"])
    }

    @Test func nothingOrdinaryFollowsALifecycleEventSoTheQueueNeverExceedsItsCapacity() async throws {
        let channel = AgentEventChannel<String>(capacity: 2)
        try await channel.send("a")
        try await channel.send("b")
        try channel.sendLifecycle("end")
        #expect(try await channel.next() == "a")
        await #expect(throws: AgentEventChannel<String>.SendFailure.finished) { try await channel.send("late") }
        #expect(channel.peakBufferedCount == 3)
        channel.finish()
        #expect(try await channel.next() == "b")
        #expect(try await channel.next() == "end")
        #expect(try await channel.next() == nil)
    }

    @Test func finishIsIdempotentAndDeliversWhatWasAdmitted() async throws {
        struct Boom: Error {}
        let channel = AgentEventChannel<Int>(capacity: 8)
        for value in 1...3 { try await channel.send(value) }
        channel.finish()
        channel.finish(throwing: Boom())
        #expect(throws: AgentEventChannel<Int>.SendFailure.finished) { try channel.sendLifecycle(9) }
        var received: [Int] = []
        while let value = try await channel.next() { received.append(value) }
        #expect(received == [1, 2, 3])
        #expect(try await channel.next() == nil)

        let failing = AgentEventChannel<Int>(capacity: 8)
        try await failing.send(1)
        failing.finish(throwing: Boom())
        #expect(try await failing.next() == 1)
        await #expect(throws: Boom.self) { try await failing.next() }
    }

    @Test func aGoneConsumerRefusesWaitingAndFutureProducers() async throws {
        let channel = AgentEventChannel<Int>(capacity: 1)
        try await channel.send(1)
        let blocked = Task { try await channel.send(2) }
        try await Task.sleep(for: .milliseconds(20))
        channel.cancelConsumer()
        await #expect(throws: AgentEventChannel<Int>.SendFailure.consumerGone) { try await blocked.value }
        await #expect(throws: AgentEventChannel<Int>.SendFailure.consumerGone) { try await channel.send(3) }
    }

    @Test func cancellingAWaitingConsumerMarksItGone() async throws {
        let channel = AgentEventChannel<Int>(capacity: 4)
        let reading = Task { try await channel.next() }
        try await Task.sleep(for: .milliseconds(20))
        reading.cancel()
        await #expect(throws: CancellationError.self) { try await reading.value }
        await #expect(throws: AgentEventChannel<Int>.SendFailure.consumerGone) { try await channel.send(1) }
    }

    @Test func aProducerCancelledWhileWaitingLeavesTheQueueIntact() async throws {
        let channel = AgentEventChannel<Int>(capacity: 1)
        try await channel.send(1)
        let waiting = Task { try await channel.send(2) }
        try await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(try await channel.next() == 1)
        try await channel.send(3)
        channel.finish()
        #expect(try await channel.next() == 3)
        #expect(try await channel.next() == nil)
    }

    @Test func capacityIsClamped() {
        #expect(AgentEventChannel<Int>(capacity: 0).capacity == 1)
        #expect(AgentEventChannel<Int>(capacity: 10_000).capacity == 4096)
        #expect(AgentEventChannel<Int>().capacity == 64)
    }
}

@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct AgentEventChannelProducerTests {
    @Test func producersWaitingForRoomAreWokenWhenTheConsumerFindsTheQueueEmpty() async throws {
        let channel = AgentEventChannel<String>(capacity: 1)
        try await channel.send("a")
        let first = Task { try await channel.send("b") }
        let second = Task { try await channel.send("c") }
        // Both producers wait for room.
        let deadline = ContinuousClock.now + .hangGuard
        while channel.waitingProducerCount < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(channel.waitingProducerCount == 2)
        var received: [String] = []
        for _ in 0..<3 { if let value = try await channel.next() { received.append(value) } }
        try await first.value
        try await second.value
        #expect(received.sorted() == ["a", "b", "c"])
        #expect(received.first == "a")
    }

    @Test func theConsumerGoneHandlerRunsExactlyOnce() async throws {
        for _ in 0..<200 {
            let channel = AgentEventChannel<Int>(capacity: 1)
            let calls = Counter()
            async let register: Void = channel.onConsumerGone { calls.increment() }
            async let cancel: Void = channel.cancelConsumer()
            _ = await (register, cancel)
            #expect(calls.count == 1)
        }
    }

    @Test func aBatchIsAdmittedInOrderWaitsForRoomPastTheCapacityAndWakesAParkedConsumerOnce() async throws {
        let channel = AgentEventChannel<Int>(capacity: 3)
        // A consumer parked on the empty queue gets the batch's first element straight away; the rest
        // are buffered behind it (so it is resumed once, not once per element).
        let consumer = Task { try await channel.next() }
        while channel.parkedConsumerCount == 0 { await Task.yield() }
        try await channel.send(contentsOf: [1, 2, 3])
        #expect(try await consumer.value == 1)
        #expect(channel.peakBufferedCount == 2)
        // A batch longer than the room left waits for the consumer, then goes on where it stopped.
        let producer = Task { try await channel.send(contentsOf: [4, 5, 6, 7]) }
        while channel.waitingProducerCount == 0 { await Task.yield() }
        var received: [Int] = []
        for _ in 0..<6 { if let value = try await channel.next() { received.append(value) } }
        try await producer.value
        #expect(received == [2, 3, 4, 5, 6, 7])
        #expect(channel.peakBufferedCount == 3)
    }

    @Test func aBatchSentToAGoneConsumerIsRefused() async throws {
        let channel = AgentEventChannel<Int>(capacity: 4)
        channel.cancelConsumer()
        await #expect(throws: AgentEventChannel<Int>.SendFailure.consumerGone) { try await channel.send(contentsOf: [1, 2]) }
    }

    @Test func aCancelledConsumerIsRefusedEvenWhenAnEventIsBuffered() async throws {
        let channel = AgentEventChannel<Int>(capacity: 4)
        try await channel.send(1)
        let consumer = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await channel.next()
        }
        await #expect(throws: CancellationError.self) { try await consumer.value }
        await #expect(throws: AgentEventChannel<Int>.SendFailure.consumerGone) { try await channel.send(2) }
    }
}
