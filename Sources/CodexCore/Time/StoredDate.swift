package import Foundation

/// The dates a store keeps: from `Date.distantPast` (the end of year 0) to the end of year 9999 UTC.
/// A stored date outside them (`1e300` seconds, written by a damaged or forged row) is damage: it is
/// refused where the row is decoded, so no formatter, day count or `Int` conversion ever sees it.
package enum StoredDate {
    /// The range, in seconds since the reference date (2001-01-01T00:00:00Z).
    package static let range: ClosedRange<TimeInterval> = Date.distantPast.timeIntervalSinceReferenceDate...252_423_993_599.999

    /// The date `seconds` after the reference date, or `nil` when it is not finite or outside ``range``.
    package static func date(sinceReferenceDate seconds: Double) -> Date? {
        range.contains(seconds) ? Date(timeIntervalSinceReferenceDate: seconds) : nil
    }

    /// A JSON encoder for stored rows: dates in `Date`'s own `Codable` form, and a date outside ``range``
    /// refused (`EncodingError.invalidValue`), so a store never writes what it would refuse to read.
    package static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            let seconds = date.timeIntervalSinceReferenceDate
            guard range.contains(seconds) else {
                throw EncodingError.invalidValue(date, .init(codingPath: encoder.codingPath, debugDescription: "a date outside the years 0 to 9999"))
            }
            var container = encoder.singleValueContainer()
            try container.encode(seconds)
        }
        return encoder
    }

    /// What a store says when a value it was asked to write holds a date outside ``range``.
    package static let refusal = "a date outside the years 0 to 9999 cannot be stored"

    /// A JSON decoder for stored rows: dates as `Date`'s own `Codable` form (seconds since the
    /// reference date), each checked against ``range``.
    package static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let seconds = try container.decode(Double.self)
            guard let date = StoredDate.date(sinceReferenceDate: seconds) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "a date outside the years 0 to 9999")
            }
            return date
        }
        return decoder
    }
}
