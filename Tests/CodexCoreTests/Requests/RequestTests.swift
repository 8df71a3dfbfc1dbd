import CodexCore
import Foundation
import Testing

// The types of the documented "Request options" example.
private struct NutritionProfile: Codable, Sendable {
    let dietaryGoal: String
    let allergies: [String]
}

private enum DietPlanningMode: RequestMode {
    case planning
    var naturalLanguage: String { "Plan a healthy diet recommendation tailored to the known nutrition profile." }
}

private enum DietRequirement: RequestRequirement {
    case proteinTarget, fiberTarget, mealIdeas
    var naturalLanguage: String {
        switch self {
        case .proteinTarget: "Recommend meals that support a high-protein diet."
        case .fiberTarget: "Include foods that help increase daily fiber intake."
        case .mealIdeas: "Suggest practical breakfast, lunch, and dinner ideas."
        }
    }
}

private struct DietPlanningOptions: RequestOptionsRepresentable {
    let mode: DietPlanningMode
    let requirements: [DietRequirement]
}

private struct PlannerContext: Codable, Sendable {
    let objective: String
    let customerTier: String
}

@Suite struct RequestTests {
    @Test func rendersTheSpecExampleExactly() throws {
        let request = try Request(
            text: "Create a healthy diet plan for this week.",
            context: NutritionProfile(dietaryGoal: "Lose weight while maintaining energy", allergies: ["peanuts"]),
            options: DietPlanningOptions(mode: .planning, requirements: [.proteinTarget, .fiberTarget, .mealIdeas])
        )
        #expect(request.developerMessages == [
            AgentDeveloperMessage(kind: .context, text: #"{"dietaryGoal":"Lose weight while maintaining energy","allergies":["peanuts"]}"#),
            AgentDeveloperMessage(kind: .turnPolicy, text: """
            Mode: Plan a healthy diet recommendation tailored to the known nutrition profile.
            Requirements:
            - Recommend meals that support a high-protein diet.
            - Include foods that help increase daily fiber intake.
            - Suggest practical breakfast, lunch, and dinner ideas.
            """),
        ])
        #expect(request.text == "Create a healthy diet plan for this week.")
    }

    @Test func contextSchemaNameIsShownBeforeTheJSON() throws {
        let request = try Request(
            text: "Draft a response for the delayed package.",
            context: PlannerContext(objective: "Resolve the shipping complaint quickly.", customerTier: "plus"),
            contextSchemaName: "PlannerContext"
        )
        #expect(request.developerMessages.map(\.text) == [
            "Context type: PlannerContext\n{\"objective\":\"Resolve the shipping complaint quickly.\",\"customerTier\":\"plus\"}",
        ])
        #expect(request.renderedPolicy == nil)
    }

    @Test func optionsWithoutRequirementsRenderOnlyTheMode() throws {
        let request = try Request(text: "x", options: DietPlanningOptions(mode: .planning, requirements: []))
        #expect(request.developerMessages.map(\.text) == ["Mode: Plan a healthy diet recommendation tailored to the known nutrition profile."])
    }

    @Test func plainRequestsHaveNoDeveloperMessagesAndDefaults() {
        let request = Request(text: "Summarize the latest thread activity.")
        #expect(request.developerMessages.isEmpty)
        #expect(request.executionMode == .threaded)
        #expect(request.skillSelection == .inherit)
        #expect(request.personaOverride == nil)
        let ephemeral = Request(text: "x", images: [.jpeg(Data([0xFF, 0xD8, 0xFF]))], executionMode: .ephemeral)
        #expect(ephemeral.executionMode == .ephemeral)
        #expect(ephemeral.images.first?.mimeType == "image/jpeg")
    }

    @Test func slashesAndUnicodeInContextAreNotEscaped() throws {
        let request = try Request(text: "x", context: ["path": "a/b", "name": "Zoë"])
        #expect(request.renderedContext?.contains("a/b") == true)
        #expect(request.renderedContext?.contains("Zoë") == true)
    }

    @Test func skillSelectionReplacesOrAppends() {
        #expect(AgentSkillSelection.inherit.resolve(threadSkills: ["a"]) == ["a"])
        #expect(AgentSkillSelection.replace(["b"]).resolve(threadSkills: ["a"]) == ["b"])
        #expect(AgentSkillSelection.append(["b", "a"]).resolve(threadSkills: ["a"]) == ["a", "b"])
    }

    @Test func morePreciseePersonasWin() {
        let runtime = AgentPersonaStack(layers: [.init(name: "runtime", instructions: "R")])
        let thread = AgentPersonaStack(layers: [.init(name: "thread", instructions: "T")])
        let request = AgentPersonaStack(layers: [.init(name: "request", instructions: "Q1"), .init(name: "extra", instructions: "Q2")])
        #expect(AgentPersonaStack.resolve(request: nil, thread: nil, runtime: runtime) == runtime)
        #expect(AgentPersonaStack.resolve(request: nil, thread: thread, runtime: runtime) == thread)
        #expect(AgentPersonaStack.resolve(request: request, thread: thread, runtime: runtime) == request)
        #expect(request.renderedInstructions == "Q1\n\nQ2")
    }

    @Test func requestsRoundTripThroughCodable() throws {
        let original = try Request(
            text: "t", images: [.png(Data([0x89, 0x50]))], context: ["k": 1], contextSchemaName: "K",
            options: DietPlanningOptions(mode: .planning, requirements: [.mealIdeas]), executionMode: .ephemeral,
            personaOverride: AgentPersonaStack(layers: [.init(name: "p", instructions: "i")]), skillSelection: .append(["s"])
        )
        let decoded = try JSONDecoder().decode(Request.self, from: JSONEncoder().encode(original))
        #expect(decoded == original)
        #expect(decoded.developerMessages == original.developerMessages)
    }
}
