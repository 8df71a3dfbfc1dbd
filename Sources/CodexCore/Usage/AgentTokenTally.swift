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
    /// How many records did not report the count (or reported one that would overflow the sum).
    public var unknownCount: Int

    /// Creates a tally.
    public init(known: Int = 0, unknownCount: Int = 0) {
        self.known = known
        self.unknownCount = unknownCount
    }

    /// Whether every record reported the count, so ``known`` is the whole sum.
    public var isComplete: Bool { unknownCount == 0 }

    /// Adds one record's count; `nil` (not reported) counts as unknown. A count that would overflow the
    /// sum counts as unknown too, rather than trapping or wrapping.
    public mutating func add(_ count: Int?) {
        guard let count else {
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
