/// How one batch of tool calls runs, in the model's order: each run of consecutive parallel-safe calls
/// runs together (at most the runtime's cap at a time), and every other call runs alone, after the
/// calls before it finished and before the calls after it start.
enum ToolCallSchedule {
    /// A part of the batch.
    enum Segment: Hashable, Sendable {
        /// Consecutive parallel-safe calls (their indexes in the batch).
        case together(Range<Int>)
        /// One call that runs alone (serial or approval-gated).
        case alone(Int)
    }

    /// The segments for a batch whose calls are parallel-safe as `parallelSafe` says.
    static func segments(_ parallelSafe: [Bool]) -> [Segment] {
        var segments: [Segment] = []
        var runStart: Int?
        for (index, safe) in parallelSafe.enumerated() {
            if safe {
                if runStart == nil { runStart = index }
                continue
            }
            if let start = runStart { segments.append(.together(start..<index)) }
            runStart = nil
            segments.append(.alone(index))
        }
        if let start = runStart { segments.append(.together(start..<parallelSafe.count)) }
        return segments
    }
}
