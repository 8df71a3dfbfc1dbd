/// One dispatched server-sent event.
///
/// `data` keeps its bytes as received (lines joined with LF); ``data`` decodes them as UTF-8 with
/// replacement characters, as the event-stream standard prescribes.
public struct SSEEvent: Sendable, Hashable {
    /// The `event` field, or `message` when the event had none.
    public var type: String
    /// The UTF-8 bytes of the joined `data` lines.
    public var dataBytes: [UInt8]
    /// The last event ID seen on the stream (it persists across events), if any.
    public var lastEventID: String?
    /// The reconnection time most recently set by a valid `retry` field on the stream, in milliseconds.
    public var retry: Int?

    /// Creates an event.
    public init(type: String = "message", data: String, lastEventID: String? = nil, retry: Int? = nil) {
        self.init(type: type, dataBytes: Array(data.utf8), lastEventID: lastEventID, retry: retry)
    }

    /// Creates an event from raw data bytes.
    public init(type: String, dataBytes: [UInt8], lastEventID: String? = nil, retry: Int? = nil) {
        self.type = type
        self.dataBytes = dataBytes
        self.lastEventID = lastEventID
        self.retry = retry
    }

    /// The data as text (invalid UTF-8 becomes U+FFFD).
    public var data: String { String(decoding: dataBytes, as: UTF8.self) }
}
