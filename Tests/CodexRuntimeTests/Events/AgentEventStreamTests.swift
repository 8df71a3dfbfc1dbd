@testable import CodexRuntime
import CodexTestSupport
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct AgentEventStreamTests {
    /// Sends 0, 1, 2, … until a send fails; returns how it failed and how many were sent.
    private func produce(into channel: AgentEventChannel<Int>) -> Task<(any Error, Int), Never> {
        Task {
            var sent = 0
            while true {
                do {
                    try await channel.send(sent)
                    sent += 1
                } catch {
                    return (error, sent)
                }
            }
        }
    }

    @Test func releasingTheStreamAndItsIteratorCancelsTheProducer() async throws {
        let channel = AgentEventChannel<Int>(capacity: 2)
        let producer = produce(into: channel)
        do {
            let stream = AgentEventStream(channel)
            var received: [Int] = []
            for try await value in stream {
                received.append(value)
                if received.count == 3 { break }
            }
            #expect(received == [0, 1, 2])
        }
        let (error, sent) = await producer.value
        #expect(error as? AgentEventChannel<Int>.SendFailure == .consumerGone)
        #expect(sent <= 3 + 2 + 1)
    }

    @Test func cancellingTheConsumingTaskCancelsTheProducer() async throws {
        let channel = AgentEventChannel<Int>(capacity: 2)
        let stream = AgentEventStream(channel)
        let consumer = Task {
            var count = 0
            for try await _ in stream { count += 1 }
            return count
        }
        try await Task.sleep(for: .milliseconds(20))
        consumer.cancel()
        _ = try? await consumer.value
        let producer = produce(into: channel)
        let (error, _) = await producer.value
        #expect(error as? AgentEventChannel<Int>.SendFailure == .consumerGone)
    }

    @Test func aStreamReadToTheEndDeliversEverythingThenNil() async throws {
        let channel = AgentEventChannel<String>(capacity: 1)
        let stream = AgentEventStream(channel)
        let producer = Task {
            for value in ["a", "b", "c"] { try await channel.send(value) }
            try channel.sendLifecycle("completed")
            channel.finish()
        }
        var received: [String] = []
        for try await value in stream { received.append(value) }
        try await producer.value
        #expect(received == ["a", "b", "c", "completed"])
    }
}
