@testable import CodexRuntime
import Testing

/// The channel's rules, one call at a time, with strings standing in for continuations and the
/// gone-handler: no tasks, no locks, no timing.
@Suite struct AgentEventChannelStateTests {
    typealias State = AgentEventChannelState<Int, String, String, String>

    private struct Boom: Error, Equatable {}

    private func sent(_ action: State.SendAction) -> String {
        switch action {
        case .resumeConsumer(let consumer): "resume \(consumer)"
        case .admitted: "admitted"
        case .suspend: "suspend"
        case .fail(let failure): "fail \(failure)"
        }
    }

    private func taken(_ action: State.NextAction) -> String {
        switch action {
        case .deliver(let element, let producer): "deliver \(element)" + (producer.map { " wake \($0)" } ?? "")
        case .end(let failure): failure == nil ? "end" : "end \(failure is Boom ? "boom" : "other")"
        case .suspended(let producer): "suspended" + (producer.map { " wake \($0)" } ?? "")
        case .cancelled: "cancelled"
        }
    }

    private func resumed(_ resumption: State.ProducerResumption?) -> String {
        switch resumption {
        case nil: "parked"
        case .proceed?: "proceed"
        case .fail(let error)?: "fail \(error is CancellationError ? "cancelled" : String(describing: error))"
        }
    }

    @Test func ordinarySendsFillTheCapacityThenWaitAndDrainInOrderWakingTheFirstWaiter() {
        var state = State(capacity: 2, reservedLifecycleSlots: 4)
        #expect(sent(state.send(1, lifecycle: false, woken: false)) == "admitted")
        #expect(sent(state.send(2, lifecycle: false, woken: false)) == "admitted")
        #expect(sent(state.send(3, lifecycle: false, woken: false)) == "suspend")
        let first = state.makeProducerID()
        let second = state.makeProducerID()
        #expect(first != second)
        #expect(resumed(state.park("p1", id: first, isCancelled: false)) == "parked")
        #expect(resumed(state.park("p2", id: second, isCancelled: false)) == "parked")
        #expect(state.waitingProducerCount == 2)
        #expect(taken(state.next("c", isCancelled: false)) == "deliver 1 wake p1")
        #expect(taken(state.next("c", isCancelled: false)) == "deliver 2 wake p2")
        #expect(taken(state.next("c", isCancelled: false)) == "suspended")
        #expect(state.peakCount == 2)
    }

    @Test func aWaitingConsumerIsHandedTheElementWithoutBuffering() {
        var state = State(capacity: 2, reservedLifecycleSlots: 4)
        #expect(taken(state.next("c", isCancelled: false)) == "suspended")
        #expect(sent(state.send(7, lifecycle: false, woken: false)) == "resume c")
        #expect(state.count == 0)
        #expect(state.peakCount == 0)
        // The consumer was handed over once: the next send is buffered.
        #expect(sent(state.send(8, lifecycle: false, woken: false)) == "admitted")
    }

    @Test func aNewProducerQueuesBehindWaitersButAWokenOneGoesFirst() {
        var state = State(capacity: 1, reservedLifecycleSlots: 4)
        #expect(sent(state.send(1, lifecycle: false, woken: false)) == "admitted")
        #expect(resumed(state.park("p1", id: state.makeProducerID(), isCancelled: false)) == "parked")
        #expect(taken(state.next("c", isCancelled: false)) == "deliver 1 wake p1")
        // Room, and nobody waits any more: a newcomer would be admitted, and so is the woken one.
        #expect(sent(state.send(2, lifecycle: false, woken: true)) == "admitted")
        #expect(sent(state.send(3, lifecycle: false, woken: false)) == "suspend")
        #expect(resumed(state.park("p2", id: state.makeProducerID(), isCancelled: false)) == "parked")
        #expect(taken(state.next("c", isCancelled: false)) == "deliver 2 wake p2")
        // p2 is woken but has not sent yet; a newcomer that finds room still sees no waiter and goes.
        #expect(sent(state.send(4, lifecycle: false, woken: false)) == "admitted")
        #expect(sent(state.send(3, lifecycle: false, woken: true)) == "suspend")
    }

    @Test func lifecycleEventsUseTheReservedSlotsAndEndOrdinarySends() {
        var state = State(capacity: 1, reservedLifecycleSlots: 2)
        #expect(sent(state.send(1, lifecycle: false, woken: false)) == "admitted")
        #expect(sent(state.send(100, lifecycle: true, woken: true)) == "admitted")
        #expect(sent(state.send(101, lifecycle: true, woken: true)) == "admitted")
        #expect(sent(state.send(102, lifecycle: true, woken: true)) == "fail lifecycleSlotsExhausted")
        #expect(sent(state.send(2, lifecycle: false, woken: true)) == "fail finished")
        #expect(state.count == 3)
        #expect(taken(state.next("c", isCancelled: false)) == "deliver 1")
        #expect(taken(state.next("c", isCancelled: false)) == "deliver 100")
        // Drained below the reserve: one slot is free again.
        #expect(sent(state.send(103, lifecycle: true, woken: true)) == "admitted")
    }

    @Test func parkingProceedsFailsOrWaitsAndACancelledProducerIsTakenOutOnce() {
        var state = State(capacity: 1, reservedLifecycleSlots: 4)
        #expect(resumed(state.park("early", id: state.makeProducerID(), isCancelled: false)) == "proceed")
        #expect(sent(state.send(1, lifecycle: false, woken: false)) == "admitted")
        #expect(resumed(state.park("cancelled", id: state.makeProducerID(), isCancelled: true)) == "fail cancelled")
        let id = state.makeProducerID()
        #expect(resumed(state.park("p", id: id, isCancelled: false)) == "parked")
        #expect(state.cancelProducer(id: id) == "p")
        #expect(state.cancelProducer(id: id) == nil)
        #expect(state.waitingProducerCount == 0)
        _ = state.finish(throwing: nil)
        #expect(resumed(state.park("late", id: state.makeProducerID(), isCancelled: false)) == "fail finished")
    }

    @Test func finishingRefusesWaitersDrainsTheBufferThenEndsWithTheFailureOnce() throws {
        var state = State(capacity: 1, reservedLifecycleSlots: 4)
        #expect(sent(state.send(1, lifecycle: false, woken: false)) == "admitted")
        #expect(resumed(state.park("p", id: state.makeProducerID(), isCancelled: false)) == "parked")
        let finished = state.finish(throwing: Boom())
        let action = try #require(finished)
        #expect(action.consumer == nil, "an element is still buffered: the consumer is not parked")
        #expect(action.producers == ["p"])
        #expect(state.finish(throwing: nil) == nil)
        #expect(sent(state.send(2, lifecycle: true, woken: true)) == "fail finished")
        #expect(taken(state.next("c", isCancelled: false)) == "deliver 1")
        #expect(taken(state.next("c", isCancelled: false)) == "end boom")
        #expect(taken(state.next("c", isCancelled: false)) == "end")
    }

    @Test func finishingAnEmptyChannelHandsBackTheParkedConsumer() throws {
        var state = State(capacity: 1, reservedLifecycleSlots: 4)
        #expect(taken(state.next("c", isCancelled: false)) == "suspended")
        let finished = state.finish(throwing: nil)
        let action = try #require(finished)
        #expect(action.consumer == "c")
        #expect(action.failure == nil)
        #expect(action.producers.isEmpty)
    }

    @Test func theConsumerGoingAwayDropsEverythingAndHandsOutTheHandlerOnce() {
        var state = State(capacity: 1, reservedLifecycleSlots: 4)
        #expect(state.installGoneHandler("handler") == nil)
        #expect(sent(state.send(1, lifecycle: false, woken: false)) == "admitted")
        #expect(resumed(state.park("p", id: state.makeProducerID(), isCancelled: false)) == "parked")
        let gone = state.consumerGone()
        #expect(gone.consumer == nil)
        #expect(gone.producers == ["p"])
        #expect(gone.handler == "handler")
        #expect(state.count == 0)
        #expect(state.consumerGone().handler == nil)
        #expect(sent(state.send(2, lifecycle: false, woken: false)) == "fail consumerGone")
        #expect(sent(state.send(3, lifecycle: true, woken: true)) == "fail consumerGone")
        #expect(taken(state.next("c", isCancelled: false)) == "cancelled")
        // A handler installed after the consumer left is handed straight back to run now.
        #expect(state.installGoneHandler("late") == "late")
    }

    @Test func aParkedConsumerIsHandedBackWhenItGoesAndACancelledOneNeverParks() {
        var state = State(capacity: 1, reservedLifecycleSlots: 4)
        #expect(taken(state.next("c", isCancelled: true)) == "cancelled")
        #expect(taken(state.next("c", isCancelled: false)) == "suspended")
        #expect(state.consumerGone().consumer == "c")
        #expect(state.isConsumerGone)
    }

    @Test func takingABufferedElementNeverParksAndFreesRoomForTheFirstWaiter() {
        var state = State(capacity: 1, reservedLifecycleSlots: 4)
        #expect(state.takeBuffered() == nil)
        #expect(sent(state.send(1, lifecycle: false, woken: false)) == "admitted")
        #expect(sent(state.send(2, lifecycle: false, woken: false)) == "suspend")
        #expect(resumed(state.park("p2", id: state.makeProducerID(), isCancelled: false)) == "parked")
        let taken = state.takeBuffered()
        #expect(taken?.0 == 1)
        #expect(taken?.wake == "p2")
        #expect(state.takeBuffered() == nil)
        #expect(!state.isConsumerParked)
        _ = state.consumerGone()
        #expect(state.takeBuffered() == nil)
    }
}
