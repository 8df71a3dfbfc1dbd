import CodexCore
import CodexRuntime
import CodexSchema
import CodexTestSupport
import CodexStorageSQLite
import Foundation
import Testing

struct NutritionProfile: Codable, Sendable {
    let dietaryGoal: String
    let allergies: [String]
}

enum DietPlanningMode: RequestMode {
    case planning
    var naturalLanguage: String { "Plan a healthy diet recommendation tailored to the known nutrition profile." }
}

enum DietRequirement: RequestRequirement {
    case proteinTarget, fiberTarget, mealIdeas
    var naturalLanguage: String {
        switch self {
        case .proteinTarget: "Recommend meals that support a high-protein diet."
        case .fiberTarget: "Include foods that help increase daily fiber intake."
        case .mealIdeas: "Suggest practical breakfast, lunch, and dinner ideas."
        }
    }
}

struct DietPlanningOptions: RequestOptionsRepresentable {
    let mode: DietPlanningMode
    let requirements: [DietRequirement]
}

struct HealthyDietPlan: AgentStructuredOutput {
    let summary: String
    let breakfast: String
    let lunch: String
    let dinner: String

    static let responseFormat = AgentStructuredOutputFormat(
        name: "healthy_diet_plan",
        description: "A healthy diet recommendation tailored to the user's needs.",
        schema: .object(
            properties: ["summary": .string(), "breakfast": .string(), "lunch": .string(), "dinner": .string()],
            required: ["summary", "breakfast", "lunch", "dinner"],
            additionalProperties: false
        )
    )
}

@Suite struct AgentRuntimeRequestTests {
    @Test func theSpecsDietRequestReachesTheBackendAsItsConceptualExample() async throws {
        let plan = #"{"summary":"s","breakfast":"b","lunch":"l","dinner":"d"}"#
        let backend = FixtureAgentBackend(turns: [.reply(plan)])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        let dietPlan = try await runtime.send(
            try Request(
                text: "Create a healthy diet plan for this week.",
                context: NutritionProfile(dietaryGoal: "Lose weight while maintaining energy", allergies: ["peanuts"]),
                options: DietPlanningOptions(mode: .planning, requirements: [.proteinTarget, .fiberTarget, .mealIdeas])
            ),
            in: thread.id,
            response: HealthyDietPlan.self
        )
        #expect(dietPlan.dinner == "d")
        let request = try #require(backend.requests.first)
        #expect(request.request.developerMessages.map(\.text) == [
            #"{"dietaryGoal":"Lose weight while maintaining energy","allergies":["peanuts"]}"#,
            """
            Mode: Plan a healthy diet recommendation tailored to the known nutrition profile.
            Requirements:
            - Recommend meals that support a high-protein diet.
            - Include foods that help increase daily fiber intake.
            - Suggest practical breakfast, lunch, and dinner ideas.
            """,
        ])
        #expect(request.request.text == "Create a healthy diet plan for this week.")
        #expect(request.responseContract == "Response contract\nReturn the final result serialized as `HealthyDietPlan`.")
        #expect(request.responseFormat?.name == "healthy_diet_plan")
        #expect(describe(try await history(store, thread.id)).prefix(4) == [
            "event turn_started", #"developer: {"dietaryGoal":"Lose weight while maintaining energy","allergies":["peanuts"]}"#,
            "developer: Mode: Plan a healthy diet recommendation tailored to the known nutrition profile.\nRequirements:\n- Recommend meals that support a high-protein diet.\n- Include foods that help increase daily fiber intake.\n- Suggest practical breakfast, lunch, and dinner ideas.",
            "user: Create a healthy diet plan for this week.",
        ])
    }

    @Test func personasReplaceLessSpecificOnesAndSkillsReplaceOrAppend() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("ok")])
        let runtimePersona = AgentPersonaStack(layers: [.init(name: "runtime", instructions: "Be the runtime.")])
        let threadPersona = AgentPersonaStack(layers: [.init(name: "thread", instructions: "Be the thread.")])
        let browser = AgentPersonaStack(layers: [.init(name: "reservation_browser_automation_loop", instructions: "Complete the browser task deterministically.")])
        let skills = [AgentSkill(id: "triage", instructions: "Triage first."), AgentSkill(id: "refunds", instructions: "Know refunds.")]
        let runtime = try makeRuntime(backend, persona: runtimePersona, skills: skills)
        let plain = try await runtime.createThread()
        let personal = try await runtime.createThread(persona: threadPersona, skillIDs: ["triage"])
        _ = try await runtime.send(Request(text: "a"), in: plain.id)
        _ = try await runtime.send(Request(text: "b"), in: personal.id)
        _ = try await runtime.send(Request(text: "c", executionMode: .ephemeral, personaOverride: browser), in: personal.id)
        _ = try await runtime.send(Request(text: "d", skillSelection: .append(["refunds"])), in: personal.id)
        _ = try await runtime.send(Request(text: "e", skillSelection: .replace(["refunds"])), in: personal.id)
        #expect(backend.requests.map(\.instructions) == [
            "Be the runtime.", "Be the thread.", "Complete the browser task deterministically.", "Be the thread.", "Be the thread.",
        ])
        #expect(backend.requests.map(\.skillInstructions) == [
            [], ["Triage first."], ["Triage first."], ["Triage first.", "Know refunds."], ["Know refunds."],
        ])
        let unknown = await #expect(throws: AgentRuntimeError.self) {
            _ = try await runtime.send(Request(text: "f", skillSelection: .append(["nope"])), in: personal.id)
        }
        #expect(unknown?.code == .invalidRequest)
        #expect(runtime.activeTurnID(in: personal.id) == nil)
    }

    @Test func threadModelAndEffortReachTheBackend() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("ok")])
        let runtime = try makeRuntime(backend)
        let thread = try await runtime.createThread(model: .gpt6Luna, reasoningEffort: .high)
        let defaults = try await runtime.createThread()
        _ = try await runtime.send(Request(text: "a"), in: thread.id)
        _ = try await runtime.send(Request(text: "b"), in: defaults.id)
        #expect(backend.requests.map(\.model) == [.gpt6Luna, CodexModel.default])
        #expect(backend.requests.map(\.reasoningEffort) == [.high, nil])
    }

    @Test func ephemeralTurnsReplayNothingWriteNothingAndStillStreamAndDecode() async throws {
        let draft = #"{"subject":"s","reply":"r","urgency":"low"}"#
        let backend = FixtureAgentBackend(turns: [.reply("first answer"), .reply(draft)])
        let store = InMemoryRuntimeStateStore()
        let runtime = try makeRuntime(backend, store: store)
        let thread = try await runtime.createThread()
        _ = try await runtime.send(Request(text: "remember this"), in: thread.id)
        let before = try await history(store, thread.id)
        let turnBefore = try await store.latestTurn(of: thread.id)
        let value = try await runtime.send(Request(text: "quick", executionMode: .ephemeral), in: thread.id, response: ShippingReplyDraft.self)
        #expect(value.urgency == "low")
        #expect(backend.requests[1].history.isEmpty)
        #expect(try await history(store, thread.id) == before)
        #expect(try await store.latestTurn(of: thread.id) == turnBefore)
        #expect(try await store.thread(thread.id)?.status == .idle)
    }

    @Test func unknownThreadsAndOversizedImageListsAreRefusedUpFront() async throws {
        let backend = FixtureAgentBackend(turns: [.reply("ok")])
        let runtime = try makeRuntime(backend)
        let missing = await #expect(throws: AgentRuntimeError.self) { _ = try await runtime.send(Request(text: "a"), in: AgentThreadID()) }
        #expect(missing?.code == .threadNotFound)
        let thread = try await runtime.createThread()
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0])
        let tooMany = await #expect(throws: AgentRuntimeError.self) {
            _ = try await runtime.send(Request(text: "a", images: Array(repeating: .png(png), count: 33)), in: thread.id)
        }
        #expect(tooMany?.code == .tooManyImages)
        #expect(backend.requests.isEmpty)
    }

    @Test func imagesArePersistedThroughTheStoreAndRestoredAfterARestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-runtime-images-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("state.sqlite").path
        let userImage = Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 7, count: 64))
        let generated = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 9, count: 64))
        let assistant = AgentMessage(
            threadID: AgentThreadID(rawValue: ""), role: .assistant, text: "",
            images: [AgentImageAttachment(data: generated, mimeType: "image/png", generationMetadata: .init(revisedPrompt: "a red fox", size: "1024x1024", quality: "high"))]
        )
        let backend = FixtureAgentBackend(turns: [FixtureAgentBackend.Turn([.event(.assistantMessageCompleted(assistant)), .complete()])])
        let threadID: AgentThreadID
        do {
            let runtime = try makeRuntime(backend, store: try SQLiteRuntimeStateStore(path: path))
            let thread = try await runtime.createThread()
            threadID = thread.id
            let summary = try await runtime.sendWithSummary(Request(text: "", images: [.jpeg(userImage)]), in: thread.id).summary
            #expect(summary.finalMessage?.images.first?.data == generated)
        }
        let reopened = try SQLiteRuntimeStateStore(path: path)
        let messages = try await history(reopened, threadID).compactMap { item -> AgentMessage? in
            if case .message(let message) = item { return message }
            return nil
        }
        #expect(messages.map(\.role) == [.user, .assistant])
        #expect(messages[0].text == "")
        #expect(messages[0].images.map(\.data) == [userImage])
        #expect(messages[0].images.map(\.mimeType) == ["image/jpeg"])
        #expect(messages[1].images.map(\.data) == [generated])
        #expect(messages[1].images.first?.generationMetadata?.revisedPrompt == "a red fox")
        #expect(messages[1].images.first?.generationMetadata?.size == "1024x1024")
    }
}
