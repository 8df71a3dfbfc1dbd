public import CodexCore
import CodexSchema

/// Spec 001's `ShippingReplyDraft`, shared by the tests that use the spec's structured-output example.
public struct ShippingReplyDraft: AgentStructuredOutput, Equatable {
    /// The reply's subject line.
    public let subject: String
    /// The reply text.
    public let reply: String
    /// `low`, `medium` or `high`.
    public let urgency: String

    /// Creates a draft.
    public init(subject: String, reply: String, urgency: String) {
        self.subject = subject
        self.reply = reply
        self.urgency = urgency
    }

    /// The spec's response format.
    public static let responseFormat = AgentStructuredOutputFormat(
        name: "shipping_reply_draft",
        description: "A concise shipping support reply draft.",
        schema: .object(
            properties: ["subject": .string(), "reply": .string(), "urgency": .string(enum: ["low", "medium", "high"])],
            required: ["subject", "reply", "urgency"],
            additionalProperties: false
        )
    )
}
