@testable import CodexRuntime
import Testing

/// The batch schedule as a pure function: runs of parallel-safe calls together, every other call alone.
@Suite struct ToolCallScheduleTests {
    @Test(arguments: [
        ([], []),
        ([true, true, true, true], [.together(0..<4)]),
        ([false, false], [.alone(0), .alone(1)]),
        ([true, true, false, true, true], [.together(0..<2), .alone(2), .together(3..<5)]),
        ([false, true], [.alone(0), .together(1..<2)]),
        ([true, false], [.together(0..<1), .alone(1)]),
        ([true, false, false, true, true, true], [.together(0..<1), .alone(1), .alone(2), .together(3..<6)]),
    ] as [([Bool], [ToolCallSchedule.Segment])])
    func segmentsKeepTheModelsOrder(parallelSafe: [Bool], expected: [ToolCallSchedule.Segment]) {
        #expect(ToolCallSchedule.segments(parallelSafe) == expected)
    }
}
