import CodexCore
import CodexSchema
import Foundation

/// One benchmark figure, printed as text or in the `--json` shape every benchmark shares.
struct BenchResult {
    var name: String
    var mode: String
    var metric: String
    var value: Double
    var unit: String
    var bytes: Int?
    var baseline: (name: String, value: Double)?

    /// value ÷ baseline value.
    var ratio: Double? {
        guard let baseline, baseline.value > 0 else { return nil }
        return value / baseline.value
    }

    var json: JSONValue {
        var members: JSONObject = [
            "name": .string(name), "mode": .string(mode), "metric": .string(metric),
            "value": .number(BenchReport.number(value)), "unit": .string(unit),
        ]
        if let bytes { members["bytes"] = .number(JSONNumber(bytes)) }
        if let baseline {
            members["baseline"] = ["name": .string(baseline.name), "value": .number(BenchReport.number(baseline.value))]
        }
        if let ratio { members["ratio"] = .number(BenchReport.number(ratio, places: 3)) }
        return .object(members)
    }
}

/// Collects results and prints them at the end of a suite.
struct BenchReport {
    let suite: String
    var results: [BenchResult] = []
    var notes: [String] = []
    /// Figures the suite could not measure, each with the reason (the rest of the suite still ran).
    var missing: [String] = []

    static var buildConfiguration: String {
        #if DEBUG
        return "debug"
        #else
        return "release"
        #endif
    }

    static func number(_ value: Double, places: Int = 1) -> JSONNumber {
        JSONNumber(parsing: String(format: "%.\(places)f", value)) ?? JSONNumber(0)
    }

    /// The CPU model and core count, from /proc/cpuinfo on Linux.
    static var machine: String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let modelLine = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
        let model = modelLine?.split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        return "\(model), \(ProcessInfo.processInfo.activeProcessorCount) cores"
    }

    func print(json: Bool) {
        if json {
            let date = ISO8601DateFormatter().string(from: Date())
            var object: JSONObject = [
                "suite": .string(suite), "build": .string(Self.buildConfiguration), "date": .string(date),
                "machine": .string(Self.machine), "results": .array(results.map(\.json)),
            ]
            if !missing.isEmpty { object["missing"] = .array(missing.map(JSONValue.string)) }
            Console.exactLine(JSONValue.object(object).canonicalString())
            return
        }
        Console.line("bench \(suite) (\(Self.buildConfiguration) build, \(Self.machine))")
        for result in results {
            var line = "  \(result.name) [\(result.mode)]: \(Self.format(result.value)) \(result.unit)"
            if let baseline = result.baseline, let ratio = result.ratio {
                line += "  vs \(baseline.name) \(Self.format(baseline.value)) \(result.unit)  ratio \(String(format: "%.2f", ratio))x"
            }
            Console.line(line)
        }
        for gap in missing { Console.line("  missing: \(gap)") }
        for note in notes { Console.line("  note: \(note)") }
    }

    static func format(_ value: Double) -> String {
        if value >= 100 { return String(format: "%.0f", value) }
        return String(format: "%.2f", value)
    }
}

/// Times repeated work the way the benchmark READMEs prescribe: calibrate a batch size so one run takes
/// at least the target time, then take the median rate of several runs.
struct BenchTimer {
    var runSeconds: Double
    var runs: Int
    /// A fixed batch size instead of calibration (for instruction counting under valgrind).
    var fixedIterations: Int?

    /// Returns the median operations per second of `body`, which performs one operation per call and
    /// returns a value folded into a checksum so the work cannot be optimized away.
    func operationsPerSecond(_ body: () throws -> Int) rethrows -> Double {
        let clock = ContinuousClock()
        var checksum = 0
        var batch = 1
        while fixedIterations == nil {
            let start = clock.now
            for _ in 0..<batch { checksum &+= try body() }
            let elapsed = (clock.now - start).inSeconds
            if elapsed >= runSeconds / 4 || batch >= 1 << 30 {
                batch = max(1, Int(Double(batch) * runSeconds / max(elapsed, 1e-9)))
                break
            }
            batch *= 4
        }
        if let fixedIterations { batch = fixedIterations }
        var rates: [Double] = []
        for _ in 0..<runs {
            let start = clock.now
            for _ in 0..<batch { checksum &+= try body() }
            rates.append(Double(batch) / max((clock.now - start).inSeconds, 1e-9))
        }
        if checksum == Int.min { Console.error("") } // keeps `checksum` observable
        rates.sort()
        return rates[rates.count / 2]
    }
}
