/// A sum of one kind of token count over several usage records, keeping apart the records that did
/// not report it: an unknown count is never added as zero without saying so.
///
/// ```swift
/// var input = AgentTokenTally()
/// input.add(1_200)
/// input.add(nil)
/// (input.known, input.unknownCount, input.isComplete)   // (1200, 1, false)
/// ```
public struct AgentTokenTally: Sendable, Hashable {
    /// The sum of the counts that were reported.
    public var known: Int
    /// How many records did not report the count (or reported a negative one, or one that would overflow
    /// the sum).
    public var unknownCount: Int

    /// Creates a tally.
    public init(known: Int = 0, unknownCount: Int = 0) {
        self.known = known
        self.unknownCount = unknownCount
    }

    /// Whether every record reported the count, so ``known`` is the whole sum.
    public var isComplete: Bool { unknownCount == 0 }

    /// Adds one record's count; `nil` (not reported) counts as unknown. A negative count (no provider
    /// reports one) and a count that would overflow the sum count as unknown too, rather than lowering
    /// the sum, trapping or wrapping.
    public mutating func add(_ count: Int?) {
        guard let count, count >= 0 else {
            unknownCount += 1
            return
        }
        let (sum, overflow) = known.addingReportingOverflow(count)
        if overflow {
            unknownCount += 1
        } else {
            known = sum
        }
    }
}
