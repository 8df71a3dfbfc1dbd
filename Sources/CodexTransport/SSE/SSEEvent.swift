/// One dispatched server-sent event.
///
/// `data` keeps its bytes as received (lines joined with LF); ``data`` decodes them as UTF-8 with
/// replacement characters, as the event-stream standard prescribes. Two events are equal when their
/// fields are; ``byteOffset`` (where the event was found) is not compared.
public struct SSEEvent: Sendable, Hashable {
    /// The `event` field, or `message` when the event had none.
    public var type: String
    /// The UTF-8 bytes of the joined `data` lines.
    public var dataBytes: [UInt8]
    /// The last event ID seen on the stream (it persists across events), if any.
    public var lastEventID: String?
    /// The reconnection time most recently set by a valid `retry` field on the stream, in milliseconds.
    public var retry: Int?
    /// Where the event's first field line starts in the stream (bytes from the start), when it came
    /// from an ``SSEFramer``; errors about the event report it.
    public var byteOffset: Int?

    /// Creates an event.
    public init(type: String = "message", data: String, lastEventID: String? = nil, retry: Int? = nil) {
        self.init(type: type, dataBytes: Array(data.utf8), lastEventID: lastEventID, retry: retry)
    }

    /// Creates an event from raw data bytes.
    public init(type: String, dataBytes: [UInt8], lastEventID: String? = nil, retry: Int? = nil, byteOffset: Int? = nil) {
        self.type = type
        self.dataBytes = dataBytes
        self.lastEventID = lastEventID
        self.retry = retry
        self.byteOffset = byteOffset
    }

    /// Equal when type, data, last event ID and retry are equal (the offset is not compared).
    public static func == (lhs: SSEEvent, rhs: SSEEvent) -> Bool {
        lhs.type == rhs.type && lhs.dataBytes == rhs.dataBytes && lhs.lastEventID == rhs.lastEventID && lhs.retry == rhs.retry
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(dataBytes)
        hasher.combine(lastEventID)
        hasher.combine(retry)
    }

    /// The data as text (invalid UTF-8 becomes U+FFFD).
    public var data: String { String(decoding: dataBytes, as: UTF8.self) }
}
