private import CLibPQ
import Foundation

/// One row of a result in binary format, read by column index. Valid only inside the row callback.
struct PostgresRow {
    let result: OpaquePointer
    let index: Int32

    /// Whether the column is SQL NULL.
    func isNull(_ column: Int) -> Bool { PQgetisnull(result, index, Int32(column)) == 1 }

    /// The column's bytes as the server sent them (binary format).
    func withBytes<T, Failure: Error>(_ column: Int, _ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> T) throws(Failure) -> T {
        let length = Int(PQgetlength(result, index, Int32(column)))
        guard let value = PQgetvalue(result, index, Int32(column)), length > 0 else {
            return try body(UnsafeBufferPointer(start: nil, count: 0))
        }
        return try value.withMemoryRebound(to: UInt8.self, capacity: length) { pointer throws(Failure) -> T in
            try body(UnsafeBufferPointer(start: pointer, count: length))
        }
    }

    /// The column's bytes (a `bytea`), copied.
    func bytes(_ column: Int) -> [UInt8] { withBytes(column) { Array($0) } }

    /// The column as text (`text`, `varchar`, `name`), or `nil` when NULL.
    func text(_ column: Int) -> String? {
        guard !isNull(column) else { return nil }
        return withBytes(column) { String(decoding: $0, as: UTF8.self) }
    }

    /// The column as an integer (`int2`, `int4`, `int8`, big-endian in binary format); 0 when NULL.
    func integer(_ column: Int) -> Int64 {
        withBytes(column) { bytes in
            guard !bytes.isEmpty else { return 0 }
            var value: Int64 = bytes[0] & 0x80 != 0 ? -1 : 0
            for byte in bytes { value = (value << 8) | Int64(byte) }
            return value
        }
    }

    /// The column as a double (`float8`, or `float4`); 0 when NULL.
    func double(_ column: Int) -> Double {
        withBytes(column) { bytes in
            var bits: UInt64 = 0
            for byte in bytes { bits = (bits << 8) | UInt64(byte) }
            switch bytes.count {
            case 8: return Double(bitPattern: bits)
            case 4: return Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits)))
            default: return 0
            }
        }
    }

    /// The column as a boolean; `false` when NULL.
    func bool(_ column: Int) -> Bool { withBytes(column) { $0.first == 1 } }
}
