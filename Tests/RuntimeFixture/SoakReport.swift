import CodexLoopback
import CodexSchema

/// What the soak measured and found; printed as one JSON object.
struct SoakReport {
    struct Sample {
        var turn: Int
        var seconds: Double
        var residentKiB: Int
        var anonymousKiB: Int
        var descriptors: Int
        var openConnections: Int
    }

    var seed: UInt64
    var turns: Int
    var faults: [String: Int] = [:]
    var outcomes: [String: Int] = [:]
    var failureCodes: [String: Int] = [:]
    var samples: [Sample] = []
    var historyItems = 0
    var violationCount = 0
    /// The first 20 violations.
    var violations: [String] = []
    var integrity = "not checked"
    var temporaryFiles = -1
    var requests = 0
    var connectionsAccepted = 0

    init(seed: UInt64, turns: Int) {
        self.seed = seed
        self.turns = turns
    }

    var isClean: Bool { violationCount == 0 && integrity == "ok" && temporaryFiles == 0 }

    mutating func violation(_ text: String) {
        violationCount += 1
        if violations.count < 20 { violations.append(text) }
    }

    mutating func sample(turn: Int, seconds: Double, connections: Int) {
        samples.append(Sample(
            turn: turn, seconds: seconds, residentKiB: (ProcessResources.residentBytes ?? 0) / 1024,
            anonymousKiB: (ProcessResources.anonymousBytes ?? 0) / 1024, descriptors: ProcessResources.openDescriptorCount,
            openConnections: connections
        ))
    }

    var json: JSONValue {
        func counts(_ values: [String: Int]) -> JSONValue {
            .object(JSONObject(values.sorted { $0.key < $1.key }.map { ($0.key, .number(JSONNumber($0.value))) }))
        }
        let samples: [JSONValue] = samples.map { sample in
            [
                "turn": .number(JSONNumber(sample.turn)), "seconds": .number(JSONNumber(floatLiteral: (sample.seconds * 100).rounded() / 100)),
                "rss_kib": .number(JSONNumber(sample.residentKiB)), "anon_kib": .number(JSONNumber(sample.anonymousKiB)),
                "fds": .number(JSONNumber(sample.descriptors)), "open_connections": .number(JSONNumber(sample.openConnections)),
            ]
        }
        return [
            "seed": .number(JSONNumber(seed)), "turns": .number(JSONNumber(turns)),
            "faults": counts(faults), "outcomes": counts(outcomes), "failure_codes": counts(failureCodes),
            "history_items": .number(JSONNumber(historyItems)), "requests": .number(JSONNumber(requests)),
            "connections_accepted": .number(JSONNumber(connectionsAccepted)),
            "violation_count": .number(JSONNumber(violationCount)), "violations": .array(violations.map { .string($0) }),
            "integrity": .string(integrity), "temporary_files": .number(JSONNumber(temporaryFiles)), "samples": .array(samples),
        ]
    }
}
