import CodexTransport
import Foundation

/// Holds the buffer the client reports.
final class BufferBox: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var stored: BoundedByteBuffer?
    func set(_ buffer: BoundedByteBuffer) { lock.lock(); stored = buffer; lock.unlock() }
    var buffer: BoundedByteBuffer? { lock.lock(); defer { lock.unlock() }; return stored }
}
