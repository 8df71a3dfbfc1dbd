/// A value that can describe itself to the model in one natural-language sentence.
public protocol NaturalLanguageRenderable {
    /// The sentence sent to the model.
    var naturalLanguage: String { get }
}

/// How the model should approach a turn, e.g. "Plan a healthy diet…". Rendered as the `Mode:` line of
/// the turn-policy developer message.
public protocol RequestMode: NaturalLanguageRenderable, Sendable {}

/// One fulfilment requirement, rendered as a `- ` bullet under `Requirements:`.
public protocol RequestRequirement: NaturalLanguageRenderable, Sendable {}

/// App-owned fulfilment policy for one turn: a mode and requirements.
///
/// Conforming types only need the two stored properties:
///
/// ```swift
/// struct DietPlanningOptions: RequestOptionsRepresentable {
///     let mode: DietPlanningMode
///     let requirements: [DietRequirement]
/// }
/// ```
public protocol RequestOptionsRepresentable: Sendable {
    /// The mode type.
    associatedtype Mode: RequestMode
    /// The requirement type.
    associatedtype Requirement: RequestRequirement
    /// The turn's mode.
    var mode: Mode { get }
    /// The turn's requirements, in order.
    var requirements: [Requirement] { get }
}

extension RequestOptionsRepresentable {
    /// The turn-policy text: `Mode: …`, then `Requirements:` and one `- …` line per requirement (the
    /// requirements block is left out when there are none).
    public var renderedPolicy: String {
        var lines = ["Mode: \(mode.naturalLanguage)"]
        if !requirements.isEmpty {
            lines.append("Requirements:")
            lines.append(contentsOf: requirements.map { "- \($0.naturalLanguage)" })
        }
        return lines.joined(separator: "\n")
    }
}
