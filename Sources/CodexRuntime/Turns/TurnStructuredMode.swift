/// How a turn treats structured output.
enum TurnStructuredMode: Sendable {
    /// Plain text.
    case none
    /// `text.format` json_schema; the final non-commentary reply is the payload.
    case oneShot(StructuredContract)
    /// Prose with one framed JSON block, streamed as partial and committed snapshots.
    case streamed(StructuredContract, required: Bool)

    var contract: StructuredContract? {
        switch self {
        case .none: return nil
        case .oneShot(let contract), .streamed(let contract, _): return contract
        }
    }
}
