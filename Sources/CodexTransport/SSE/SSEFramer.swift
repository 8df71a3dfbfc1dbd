public import CodexCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An incremental server-sent-events parser following the WHATWG "event stream" rules.
///
/// Feed it byte chunks as they arrive, cut anywhere; it returns the events completed so far. Lines may
/// end in LF, CR or CRLF (a CRLF split across chunks counts once); a leading byte-order mark is skipped;
/// lines starting with `:` are comments; `data` lines are joined with LF; `event`, `id` and `retry` are
/// honoured; a field without a colon has an empty value; one space after the colon is dropped. Bytes are
/// scanned once and copied at most once (a line that spans chunks, the lines of a multi-line `data`
/// field, and a single data line whose event is still open when its chunk ends), so cost is linear in
/// the input; an event whose one data line is whole in its chunk is handed over without a copy.
///
/// ```swift
/// var framer = SSEFramer()
/// var events: [SSEEvent] = []
/// try framer.feed(Array("event: ping\ndata: {\"a\":1}\n\n".utf8), into: &events)
/// events[0].type  // "ping"
/// ```
///
/// An event whose data (or a single pending line) grows past ``maximumEventBytes`` fails with `sse_event_too_large`
/// and the byte offset where the limit was crossed. At the end of the stream, an event without its
/// terminating blank line is discarded, as the standard says.
public struct SSEFramer: Sendable {
    /// The default limit on one event: 16 MiB.
    public static let defaultMaximumEventBytes = 16 * 1024 * 1024

    /// The largest event accepted, counting the raw bytes of its lines.
    public let maximumEventBytes: Int

    private var lineBuffer: [UInt8] = []
    private var dataBuffer: [UInt8] = []
    /// The current event's only data line so far, when it lies whole in the chunk being fed: its start
    /// and length there. It is lent from the chunk at dispatch, never copied; a second data line, or the
    /// end of the chunk, copies it into ``dataBuffer`` first. Always nil between calls to `feed`.
    private var dataInChunk: (start: Int, count: Int)?
    private var hasData = false
    private var eventType: [UInt8] = []
    /// The current event's `event` field repeats the last dispatched type (then ``eventType`` stays empty).
    private var eventTypeIsLast = false
    /// The last dispatched type, reused when the next event has the same type bytes (saves a String).
    private var lastType: (bytes: [UInt8], text: String) = ([], "message")
    private var lastEventID: String?
    private var reconnectionTime: Int?
    private var eventBytes = 0
    /// Where the current event's first field line started.
    private var eventStart: Int?
    private var skipLineFeed = false
    private var atStreamStart = true
    private var bomBytesSeen = 0
    private(set) var consumedBytes = 0

    /// Creates a framer.
    ///
    /// - Parameter maximumEventBytes: The largest event accepted (at least 1). Default 16 MiB.
    public init(maximumEventBytes: Int = SSEFramer.defaultMaximumEventBytes) {
        self.maximumEventBytes = max(1, maximumEventBytes)
    }

    /// The number of bytes fed so far.
    public var byteCount: Int { consumedBytes }

    /// Parses the next chunk and appends the events it completes.
    ///
    /// - Throws: ``AgentRuntimeError`` with code `sse_event_too_large` and ``AgentRuntimeError/byteOffset``.
    public mutating func feed(_ chunk: some Collection<UInt8>, into events: inout [SSEEvent]) throws(AgentRuntimeError) {
        try feed(chunk) { type, data, lastEventID, retry, byteOffset in
            events.append(SSEEvent(type: type, dataBytes: Array(data), lastEventID: lastEventID, retry: retry, byteOffset: byteOffset))
        }
    }

    /// What receives each completed event's parts, in the order of ``SSEEvent``'s properties: its type,
    /// its data (lent from the chunk being fed or from the framer's own buffer, valid only during the
    /// call), the last event ID, the
    /// reconnection time and its byte offset.
    package typealias EventSink = (
        _ type: String, _ data: UnsafeBufferPointer<UInt8>, _ lastEventID: String?, _ retry: Int?, _ byteOffset: Int?
    ) throws(AgentRuntimeError) -> Void

    /// The largest data buffer the framer keeps for the next event; a larger one is let go.
    package static let keptDataCapacity = 64 * 1024

    /// Parses the next chunk and hands each event it completes to `body`, in order, as it completes:
    /// nothing is collected and no ``SSEEvent`` is built, and the data is lent: straight from the chunk
    /// when it is one line inside it, else from a buffer the framer reuses (up to ``keptDataCapacity``),
    /// so an event is neither copied nor allocated on the way.
    ///
    /// An error `body` throws stops the chunk there and is rethrown; the rest of the chunk is dropped
    /// (``finish()`` does not count it), so the stream should not be fed further. A closure that throws
    /// says so: `{ (type, data, _, _, offset) throws(AgentRuntimeError) in … }`.
    ///
    /// - Throws: ``AgentRuntimeError`` with code `sse_event_too_large` and ``AgentRuntimeError/byteOffset``,
    ///   or what `body` throws.
    package mutating func feed(
        _ chunk: some Collection<UInt8>, each body: EventSink
    ) throws(AgentRuntimeError) {
        var failure: AgentRuntimeError?
        let handled: Void? = chunk.withContiguousStorageIfAvailable { buffer in
            do throws(AgentRuntimeError) {
                try feed(buffer: buffer, each: body)
            } catch {
                failure = error
            }
        }
        if handled == nil {
            let copy = Array(chunk)
            copy.withUnsafeBufferPointer { buffer in
                do throws(AgentRuntimeError) {
                    try feed(buffer: buffer, each: body)
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
    }

    /// Ends the stream. Returns whether an unterminated event (or partial line) was discarded.
    public mutating func finish() -> Bool {
        let discarded = !lineBuffer.isEmpty || hasData || !eventType.isEmpty || eventTypeIsLast
        lineBuffer.removeAll()
        resetEvent()
        return discarded
    }

    private mutating func feed(buffer: UnsafeBufferPointer<UInt8>, each body: EventSink) throws(AgentRuntimeError) {
        var index = 0
        let count = buffer.count
        // A byte-order mark (EF BB BF) is skipped once, even when it is split across chunks.
        while atStreamStart, index < count {
            let expected: [UInt8] = [0xEF, 0xBB, 0xBF]
            if buffer[index] == expected[bomBytesSeen] {
                bomBytesSeen += 1
                index += 1
                if bomBytesSeen == 3 { atStreamStart = false }
            } else {
                if bomBytesSeen > 0 { lineBuffer.append(contentsOf: expected[0..<bomBytesSeen]) }
                atStreamStart = false
            }
        }
        if skipLineFeed, index < count {
            skipLineFeed = false
            if buffer[index] == UInt8(ascii: "\n") { index += 1 }
        }
        var lineStart = index
        guard let base = buffer.baseAddress else { return }
        var nextLineFeed = -1 // position of the next LF at or after `index`, or count when none
        var nextCarriageReturn = -1 // the same for CR (searched once per chunk when the stream has none)
        while index < count {
            // Find the next line terminator with memchr: the nearer of the next LF and the next CR.
            if nextLineFeed < index {
                nextLineFeed = memchr(base + index, Int32(UInt8(ascii: "\n")), count - index)
                    .map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base } ?? count
            }
            if nextCarriageReturn < index {
                nextCarriageReturn = memchr(base + index, Int32(UInt8(ascii: "\r")), count - index)
                    .map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base } ?? count
            }
            let lineEnd = min(nextLineFeed, nextCarriageReturn)
            guard lineEnd < count else { break }
            let byte = buffer[lineEnd]
            index = lineEnd + 1
            if byte == UInt8(ascii: "\r") {
                if index < count {
                    if buffer[index] == UInt8(ascii: "\n") { index += 1 }
                } else {
                    skipLineFeed = true
                }
            }
            do throws(AgentRuntimeError) {
                if lineBuffer.isEmpty {
                    try process(line: UnsafeBufferPointer(rebasing: buffer[lineStart..<lineEnd]), endingAt: consumedBytes + lineEnd, chunk: base, each: body)
                } else {
                    lineBuffer.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[lineStart..<lineEnd]))
                    let line = lineBuffer
                    lineBuffer.removeAll(keepingCapacity: true)
                    var failure: AgentRuntimeError?
                    line.withUnsafeBufferPointer { pointer in
                        do throws(AgentRuntimeError) {
                            try process(line: pointer, endingAt: consumedBytes + lineEnd, chunk: nil, each: body)
                        } catch {
                            failure = error
                        }
                    }
                    if let failure { throw failure }
                }
            } catch {
                keepDataInChunk(base)
                consumedBytes += index
                throw error
            }
            lineStart = index
        }
        keepDataInChunk(base)
        if lineStart < count {
            lineBuffer.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[lineStart..<count]))
            if eventBytes + lineBuffer.count > maximumEventBytes {
                let offset = consumedBytes + count
                consumedBytes += count
                throw tooLarge(at: offset)
            }
        }
        consumedBytes += count
    }

    /// Copies a data line still lent from the chunk into ``dataBuffer``, before the chunk goes away (or
    /// before a second data line is joined to it).
    private mutating func keepDataInChunk(_ chunk: UnsafePointer<UInt8>) {
        guard let lent = dataInChunk else { return }
        dataInChunk = nil
        dataBuffer.append(contentsOf: UnsafeBufferPointer(start: chunk + lent.start, count: lent.count))
    }

    private func tooLarge(at offset: Int) -> AgentRuntimeError {
        AgentRuntimeError(.eventTooLarge(limit: maximumEventBytes, byteOffset: offset))
    }

    /// Handles one line; `chunk` is the base of the chunk being fed when `line` lies in it (nil when the
    /// line is a copy, which a data line must not be lent from).
    private mutating func process(
        line: UnsafeBufferPointer<UInt8>, endingAt offset: Int, chunk: UnsafePointer<UInt8>?, each body: EventSink
    ) throws(AgentRuntimeError) {
        if line.isEmpty {
            try dispatch(chunk: chunk, each: body)
            return
        }
        if line[0] == UInt8(ascii: ":") { return }
        if eventStart == nil { eventStart = offset - line.count }
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.count
        let name = UnsafeBufferPointer(rebasing: line[0..<colon])
        var valueStart = min(colon + 1, line.count)
        if valueStart < line.count, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = UnsafeBufferPointer(rebasing: line[valueStart..<line.count])
        if Self.equals(name, "data") {
            eventBytes += value.count + 1
            if eventBytes > maximumEventBytes { throw tooLarge(at: offset) }
            if hasData {
                if let chunk { keepDataInChunk(chunk) }
                dataBuffer.append(UInt8(ascii: "\n"))
                dataBuffer.append(contentsOf: value)
            } else if let chunk, let start = value.baseAddress {
                // The first data line: lent from the chunk unless more follow (the common case).
                dataInChunk = (start - chunk, value.count)
            } else {
                dataBuffer.append(contentsOf: value)
            }
            hasData = true
        } else if Self.equals(name, "event") {
            guard value.count <= maximumEventBytes else { throw tooLarge(at: offset) }
            // A type equal to the last dispatched one is only noted: a repeated `event` line copies nothing.
            if !value.isEmpty, lastType.bytes.withUnsafeBufferPointer({ Self.same($0, value) }) {
                eventTypeIsLast = true
                if !eventType.isEmpty { eventType.removeAll(keepingCapacity: true) }
            } else {
                eventTypeIsLast = false
                eventType = Array(value)
            }
        } else if Self.equals(name, "id") {
            if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
        } else if Self.equals(name, "retry") {
            if !value.isEmpty, value.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }), let milliseconds = Int(String(decoding: value, as: UTF8.self)) {
                reconnectionTime = milliseconds
            }
        }
    }

    private mutating func dispatch(chunk: UnsafePointer<UInt8>?, each body: EventSink) throws(AgentRuntimeError) {
        guard hasData else {
            resetEvent()
            return
        }
        let type: String
        if eventTypeIsLast {
            type = lastType.text
        } else if eventType.isEmpty {
            type = "message"
        } else {
            type = String(decoding: eventType, as: UTF8.self)
            lastType = (eventType, type)
        }
        // The data is lent to `body` from the chunk (a single data line in it) or from the framer's
        // buffer, which the next event reuses.
        defer { resetEvent() }
        let (lastEventID, retry, start) = (lastEventID, reconnectionTime, eventStart)
        // (A lent line needs its chunk: a line without one, a copy, is only ever the first of a feed,
        // before any line of that feed is lent.)
        if let chunk, let lent = dataInChunk {
            try body(type, UnsafeBufferPointer(start: chunk + lent.start, count: lent.count), lastEventID, retry, start)
            return
        }
        try dataBuffer.withUnsafeBufferPointer { (data) throws(AgentRuntimeError) in
            try body(type, data, lastEventID, retry, start)
        }
    }

    private mutating func resetEvent() {
        if dataBuffer.capacity > Self.keptDataCapacity {
            dataBuffer = []
        } else if !dataBuffer.isEmpty {
            dataBuffer.removeAll(keepingCapacity: true)
        }
        dataInChunk = nil
        hasData = false
        if !eventType.isEmpty { eventType.removeAll(keepingCapacity: true) }
        eventTypeIsLast = false
        eventBytes = 0
        eventStart = nil
    }

    @inline(__always)
    private static func same(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard let left = lhs.baseAddress, let right = rhs.baseAddress else { return lhs.count == 0 }
        return memcmp(left, right, lhs.count) == 0
    }

    @inline(__always)
    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        for index in 0..<bytes.count where bytes[index] != expected[index] { return false }
        return true
    }
}
