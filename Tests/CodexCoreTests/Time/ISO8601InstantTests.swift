@testable import CodexCore
import Foundation
import Testing

@Suite struct ISO8601InstantTests {
    @Test(arguments: [
        ("2026-12-01", 1_796_083_200.0),
        ("2026-12-01T10:00:00Z", 1_796_119_200.0),
        ("2026-12-01T10:00:00+02:00", 1_796_112_000.0),
        ("2026-12-01T10:00:00.5Z", 1_796_119_200.5),
        ("2000-02-29", 951_782_400.0),
        ("1969-12-31T23:59:59Z", -1.0),
        ("0000-12-30", -62_135_769_600.0), ("9999-12-31T23:59:59Z", 253_402_300_799.0),
    ])
    func readsADayOrAnInstant(text: String, seconds: Double) {
        #expect(ISO8601Instant.date(from: text) == Date(timeIntervalSince1970: seconds))
    }

    @Test(arguments: [
        "", "2026-12-1", "2026-13-01", "2026-02-29", "2026-04-31", "2026-12-01T24:00:00Z", "2026-12-01T10:60:00Z", "2026-12-01T10:00:00",
        "2026-12-01 10:00:00Z", "2026-12-01T10:00:00.Z", "2026-12-01T10:00:00Zjunk", "2026-12-01T10:00Z", "+2026-12-01", "２０２６-12-01", "yesterday",
        // Before the dates a store keeps (they start at 0000-12-30): read, it would be written back shifted.
        "0000-06-01", "0000-12-29T23:59:59Z",
    ])
    func refusesAnythingElse(text: String) {
        #expect(ISO8601Instant.date(from: text) == nil)
    }

    @Test func writesTheUTCDayAndTheInstant() {
        #expect(ISO8601Instant.day(of: Date(timeIntervalSince1970: 1_796_169_599)) == "2026-12-01")
        #expect(ISO8601Instant.day(of: Date(timeIntervalSince1970: 1_796_169_600)) == "2026-12-02")
        #expect(ISO8601Instant.day(of: Date(timeIntervalSince1970: -1)) == "1969-12-31")
        #expect(ISO8601Instant.text(of: Date(timeIntervalSince1970: 1_796_119_200)) == "2026-12-01T10:00:00Z")
        #expect(ISO8601Instant.text(of: Date(timeIntervalSince1970: 1_796_119_200.25)) == "2026-12-01T10:00:00.25Z")
        #expect(ISO8601Instant.text(of: Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
    }
}
