// libFuzzer target `events`: CodexTransport's ResponsesEventDecoder on arbitrary streams.
//
// The input is framed by SSEFramer (whole), and every event is decoded in order by one decoder, going on
// after errors. Oracle: nothing crashes, traps or overflows (AddressSanitizer and Swift's checks); every
// failure is an `AgentRuntimeError` with code `responses_event_malformed` carrying the event's byte
// offset; after a terminal event every further event fails; a second decoder fed the same events gives
// the same sequence of outcomes (the decoder is deterministic: its clock is fixed).
import CodexCore
import CodexTransport
import Foundation

private struct FixedClock: AgentWallClock {
    func now() -> Date { Date(timeIntervalSince1970: 1_750_000_000) }
}

private func outcomes(_ events: [SSEEvent]) -> [String] {
    var decoder = ResponsesEventDecoder(wallClock: FixedClock())
    var results: [String] = []
    for event in events {
        do throws(AgentRuntimeError) {
            let decoded = try decoder.decode(event)
            results.append(decoded.map { String(describing: $0) } ?? "duplicate")
        } catch {
            check(error.code == .responsesEventMalformed, "unexpected error code \(error.code)")
            check(error.byteOffset == event.byteOffset, "the error does not carry the event's byte offset")
            results.append("error \(error.code.rawValue)")
        }
    }
    return results
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEvents(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var framer = SSEFramer()
    var events: [SSEEvent] = []
    do throws(AgentRuntimeError) {
        try framer.feed(UnsafeBufferPointer(start: data, count: size), into: &events)
    } catch {
        return 0
    }
    // A payload without framing also counts: the whole input as the data of one event.
    if events.isEmpty, size > 0 {
        events.append(SSEEvent(type: "message", dataBytes: Array(UnsafeBufferPointer(start: data, count: size)), byteOffset: 0))
    }
    let first = outcomes(events)
    let second = outcomes(events)
    check(first == second, "two decoders disagree on the same events")
    return 0
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        FileHandle.standardError.write(Data("events oracle failed: \(message())\n".utf8))
        abort()
    }
}
