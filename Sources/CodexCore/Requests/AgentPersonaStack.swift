/// Layered persona instructions. More specific stacks replace less specific ones: a thread persona
/// replaces the runtime's, and a request's ``Request/personaOverride`` replaces both for that request.
public struct AgentPersonaStack: Sendable, Hashable, Codable {
    /// One named layer of instructions.
    public struct Layer: Sendable, Hashable, Codable {
        /// A short identifier for the layer.
        public var name: String
        /// The instructions.
        public var instructions: String

        /// Creates a layer.
        public init(name: String, instructions: String) {
            self.name = name
            self.instructions = instructions
        }
    }

    /// The layers, applied in order.
    public var layers: [Layer]

    /// Creates a stack.
    public init(layers: [Layer]) {
        self.layers = layers
    }

    /// The layers' instructions joined with blank lines.
    public var renderedInstructions: String {
        layers.map(\.instructions).filter { !$0.isEmpty }.joined(separator: "\n\n")
    }

    /// The most specific of the given stacks: request over thread over runtime.
    public static func resolve(request: AgentPersonaStack?, thread: AgentPersonaStack?, runtime: AgentPersonaStack?) -> AgentPersonaStack? {
        request ?? thread ?? runtime
    }
}
