import CodexCore
import CodexSchema
import Foundation
import Testing

@Suite struct MemorySelectionTests {
    @Test func eachModeCombinesTheRequestsFiltersWithTheConfiguredOnes() {
        let configured: [MemoryScope] = [.user]
        #expect(MemorySelection.inherit.filters(configuredScopes: configured, configuredTags: ["a"])! == ([.user], ["a"]))
        #expect(MemorySelection(mode: .inherit, scopes: [.project]).filters(configuredScopes: configured, configuredTags: [])! == ([.user], []))
        #expect(MemorySelection.append(scopes: [.project, .user], tags: ["b"]).filters(configuredScopes: configured, configuredTags: ["a"])!
            == ([.user, .project], ["a", "b"]))
        // An empty configured filter admits everything, so appending to it keeps it empty.
        #expect(MemorySelection.append(scopes: [.project], tags: ["b"]).filters(configuredScopes: [], configuredTags: [])! == ([], []))
        #expect(MemorySelection.replace(scopes: [.project, .project]).filters(configuredScopes: configured, configuredTags: ["a"])! == ([.project], []))
        #expect(MemorySelection.disable.filters(configuredScopes: configured, configuredTags: ["a"]) == nil)
    }

    @Test func instructionsCompileInThePlacementsOrderAndSkipEmptyParts() {
        func compile(_ placement: MemoryInstructionPlacement, persona: String = "P", memory: String? = "M", base: String? = "B") -> String? {
            AgentBackendTurnRequest.compileInstructions(persona: persona, skills: ["S1", "S2"], memory: memory, placement: placement, base: base)
        }
        #expect(compile(.beforePersonas) == "M\n\nP\n\nS1\n\nS2")
        #expect(compile(.beforeSkills) == "P\n\nM\n\nS1\n\nS2")
        #expect(compile(.afterSkills) == "P\n\nS1\n\nS2\n\nM")
        // Without a persona the backend's base instructions stand in for it.
        #expect(compile(.beforePersonas, persona: "") == "M\n\nB\n\nS1\n\nS2")
        #expect(compile(.beforeSkills, persona: "", memory: nil, base: nil) == "S1\n\nS2")
        #expect(AgentBackendTurnRequest.compileInstructions(persona: "", skills: [], memory: "", base: nil) == nil)
        var request = AgentBackendTurnRequest(threadID: "t", turnID: "u", request: Request(text: "x"), model: .default, instructions: "P", skillInstructions: ["S"])
        request.memoryInstructions = "M"
        request.memoryPlacement = .beforeSkills
        #expect(request.compiledInstructions(base: "B") == "P\n\nM\n\nS")
    }

    @Test func theDigestIsTheSHA256OfTheInstructionsUTF8() {
        #expect(AgentMemoryApplication.digest(ofInstructions: nil) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(AgentMemoryApplication.digest(ofInstructions: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func aRequestEncodedWithoutAMemorySelectionDecodesInheritingAndOneWithItKeepsIt() throws {
        var request = try Request(text: "Hi", context: ["k": "v"], contextSchemaName: "ctx")
        request.memorySelection = MemorySelection(mode: .replace, scopes: [.project], tags: ["t"], text: "q", instructionPlacement: .beforePersonas)
        request.selectionPurpose = "news"
        let encoded = try JSONEncoder().encode(request)
        #expect(try JSONDecoder().decode(Request.self, from: encoded) == request)

        var object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        object.removeValue(forKey: "memorySelection")
        let older = try JSONSerialization.data(withJSONObject: object)
        var expected = request
        expected.memorySelection = .inherit
        #expect(try JSONDecoder().decode(Request.self, from: older) == expected)
    }
}
