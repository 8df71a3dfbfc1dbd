// libFuzzer target `sse`: split invariance of CodexTransport's SSEFramer.
//
// Input: 8 header bytes, then the stream. Header byte 0 bit 0 selects a small event limit
// (header byte 1 + 1 bytes) instead of the default 16 MiB; bytes 2...7 give the chunk sizes, cycled.
//
// Oracle, with the default limit (no input reaches it): feeding the stream in those chunks, and one byte
// at a time, gives exactly the events (type, data, last event ID, retry and byte offset), the same
// `byteCount` and the same `finish()` answer as feeding it whole. With a small limit: whenever the whole
// feed fails, every chunked feed fails too, no later (its `sse_event_too_large` offset is at or before the
// whole feed's), and the events a chunked feed delivered are a prefix of the whole feed's; when neither
// fails, the events are identical. (The framer also bounds a line still waiting for its terminator, so a
// chunk boundary inside an overlong comment or unknown field line can fail where the whole feed, which
// sees the complete line and ignores it, does not. That memory bound is intended.) Every error is an
// `AgentRuntimeError` with code `sse_event_too_large` and a byte offset within the stream.
import CodexCore
import CodexTransport
import Foundation

private struct Outcome {
    var events: [SSEEvent] = []
    var offsets: [Int?] = []
    var error: AgentRuntimeError?
    var discarded: Bool?
    var byteCount = 0
}

private func run(_ stream: ArraySlice<UInt8>, limit: Int, chunks: (Int) -> Int) -> Outcome {
    var framer = SSEFramer(maximumEventBytes: limit)
    var outcome = Outcome()
    var start = stream.startIndex
    var step = 0
    while start < stream.endIndex {
        let end = min(stream.endIndex, start + max(1, chunks(step)))
        step += 1
        do throws(AgentRuntimeError) {
            try framer.feed(stream[start..<end], into: &outcome.events)
        } catch {
            outcome.error = error
            break
        }
        start = end
    }
    if outcome.error == nil { outcome.discarded = framer.finish() }
    outcome.offsets = outcome.events.map(\.byteOffset)
    outcome.byteCount = framer.byteCount
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSSE(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 8 else { return 0 }
    let header = input[0..<8]
    let stream = input[8...]
    let small = header[0] & 1 == 1
    let limit = small ? Int(header[1]) + 1 : SSEFramer.defaultMaximumEventBytes
    let sizes = header[2..<8].map { byte -> Int in byte >= 224 ? Int(byte - 223) * 97 : Int(byte % 32) + 1 }

    let whole = run(stream, limit: limit) { _ in stream.count }
    for (name, chunked) in [
        ("chunked", run(stream, limit: limit) { sizes[$0 % sizes.count] }),
        ("bytewise", run(stream, limit: limit) { _ in 1 }),
    ] {
        for outcome in [whole, chunked] {
            if let error = outcome.error {
                check(error.code == .sseEventTooLarge, "\(name): unexpected error code \(error.code)")
                check((0...stream.count).contains(error.byteOffset ?? -1), "\(name): error offset \(String(describing: error.byteOffset)) outside the stream")
            }
        }
        if !small {
            check(chunked.events == whole.events, "\(name): events differ from the whole feed")
            check(chunked.offsets == whole.offsets, "\(name): event byte offsets differ from the whole feed")
            check(chunked.error == nil && whole.error == nil, "\(name): an error below the default limit")
            check(chunked.discarded == whole.discarded, "\(name): finish() differs from the whole feed")
            check(chunked.byteCount == whole.byteCount, "\(name): byteCount differs")
        } else {
            if let wholeError = whole.error {
                guard let chunkError = chunked.error else {
                    check(false, "\(name): the whole feed fails at \(String(describing: wholeError.byteOffset)), the chunked feed does not")
                    continue
                }
                check((chunkError.byteOffset ?? 0) <= (wholeError.byteOffset ?? 0), "\(name): the chunked feed fails later than the whole feed")
            }
            if whole.error == nil, chunked.error == nil {
                check(chunked.events == whole.events && chunked.offsets == whole.offsets, "\(name): events differ from the whole feed")
                check(chunked.discarded == whole.discarded, "\(name): finish() differs from the whole feed")
            } else {
                check(chunked.events.count <= whole.events.count || whole.error != nil, "\(name): more events than the whole feed")
                let common = min(chunked.events.count, whole.events.count)
                check(Array(chunked.events.prefix(common)) == Array(whole.events.prefix(common)), "\(name): events are not a prefix of the whole feed's")
                if whole.error == nil {
                    check(chunked.events.count <= whole.events.count, "\(name): more events than the whole feed")
                }
            }
        }
    }
    return 0
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        FileHandle.standardError.write(Data("sse oracle failed: \(message())\n".utf8))
        abort()
    }
}
