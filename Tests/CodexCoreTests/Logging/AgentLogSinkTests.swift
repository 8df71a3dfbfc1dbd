import CodexCore
import CodexKitTesting
import Testing

@Suite struct AgentLogSinkTests {
    @Test func multiplexForwardsToEverySinkInOrder() {
        let first = InMemoryAgentLogSink()
        let second = InMemoryAgentLogSink()
        let sink = MultiplexAgentLogSink([first, NoOpAgentLogSink(), second])
        sink.record(AgentLogEvent(level: .info, category: .recovery, name: "recovery.receipt.saved", metadata: ["attempt_id": "a1"]))
        sink.record(AgentLogEvent(level: .debug, category: .network, name: "network.request"))
        #expect(first.events.map(\.name) == ["recovery.receipt.saved", "network.request"])
        #expect(second.events == first.events)
        #expect(first.events(named: "recovery.receipt.saved").first?.metadata == ["attempt_id": "a1"])
    }

    @Test func inMemorySinkKeepsTheNewestEventsUpToItsCapacity() {
        let sink = InMemoryAgentLogSink(capacity: 3)
        for index in 0..<5 { sink.record(AgentLogEvent(level: .info, category: .runtime, name: "e\(index)")) }
        #expect(sink.events.map(\.name) == ["e2", "e3", "e4"])
        sink.removeAll()
        #expect(sink.events.isEmpty)
    }

    @Test func levelFilterDropsLowerLevels() {
        let destination = InMemoryAgentLogSink()
        let sink = LevelFilteringAgentLogSink(minimumLevel: .warning, destination: destination)
        for level in [AgentLogLevel.trace, .debug, .info, .notice, .warning, .error] {
            sink.record(AgentLogEvent(level: level, category: .runtime, name: level.description))
        }
        #expect(destination.events.map(\.name) == ["warning", "error"])
    }

    @Test func concurrentRecordingLosesNothing() async {
        let sink = InMemoryAgentLogSink(capacity: 100_000)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<1_000 { sink.record(AgentLogEvent(level: .info, category: .runtime, name: "w\(worker)-\(index)")) }
                }
            }
        }
        #expect(sink.events.count == 8_000)
        #expect(Set(sink.events.map(\.name)).count == 8_000)
    }
}
