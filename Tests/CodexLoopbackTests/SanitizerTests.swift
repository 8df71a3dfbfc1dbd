import CodexTestSupport
import Foundation
import Testing

/// The sanitizer detection that scales the suite's time and memory limits.
@Suite struct SanitizerTests {
    @Test func theDetectedSanitizerIsTheOneTheRunAsksFor() {
        // `Scripts/sanitize.sh` sets this for its runs; an ordinary `swift test` is an unsanitized build.
        let expected = ProcessInfo.processInfo.environment["CODEXKIT_EXPECT_SANITIZER"] ?? "none"
        #expect(Sanitizer.active.rawValue == expected)
        switch Sanitizer.active {
        case .none: #expect(Sanitizer.slowdown == 1)
        case .address: #expect(Sanitizer.slowdown == 4)
        case .thread: #expect(Sanitizer.slowdown == 8)
        }
        #expect(Duration.hangGuard == .seconds(150 * Sanitizer.slowdown))
    }

    @Test func liveHeapBytesFollowAnAllocationAndItsRelease() throws {
        guard Sanitizer.active != .none else {
            #expect(Sanitizer.liveHeapBytes == nil)
            #expect((Sanitizer.leakMeasureBytes ?? 0) > 1024 * 1024, "the resident set size")
            return
        }
        let size = 64 * 1024 * 1024
        let before = try #require(Sanitizer.liveHeapBytes)
        let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        let held = try #require(Sanitizer.liveHeapBytes)
        block.deallocate()
        let after = try #require(Sanitizer.liveHeapBytes)
        // Other tests allocate at the same time, so the figures are bounds, not equalities.
        #expect(held - before >= size - 16 * 1024 * 1024, "held \(held - before) bytes more")
        #expect(held - after >= size - 16 * 1024 * 1024, "released \(held - after) bytes")
    }
}
