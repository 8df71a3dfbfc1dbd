@testable import CodexRuntime
import Testing

/// The protobuf wire format, byte for byte (the receiver tests check whole exports against protobuf's
/// own serializer; these pin the writer's edges on their own).
@Suite struct ProtobufWriterTests {
    private func written(_ body: (inout ProtobufWriter) -> Void) -> [UInt8] {
        var writer = ProtobufWriter(capacity: 0)
        body(&writer)
        return writer.bytes
    }

    @Test func varintsTakeSevenBitsAByteLowestFirst() {
        #expect(written { $0.varintField(1, 0) } == [0x08, 0x00])
        #expect(written { $0.varintField(1, 127) } == [0x08, 0x7F])
        #expect(written { $0.varintField(1, 128) } == [0x08, 0x80, 0x01])
        #expect(written { $0.varintField(1, 300) } == [0x08, 0xAC, 0x02])
        // A negative int64 is its two's complement: ten bytes.
        #expect(written { $0.varintField(3, UInt64(bitPattern: -1)) } == [0x18] + Array(repeating: 0xFF, count: 9) + [0x01])
        #expect(written { $0.varintField(1, .max) } == [0x08] + Array(repeating: 0xFF, count: 9) + [0x01])
        // Field 16 needs a two-byte tag.
        #expect(written { $0.varintField(16, 1) } == [0x80, 0x01, 0x01])
    }

    @Test func fixedWidthNumbersAreLittleEndianAndIDsBigEndian() {
        #expect(written { $0.fixed64Field(7, 0x0102_0304_0506_0708) } == [0x39, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01])
        #expect(written { $0.fixed64Field(4, (1.0).bitPattern) } == [0x21, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F])
        #expect(written { $0.bigEndianField(2, 0x0102_0304_0506_0708) } == [0x12, 0x08, 1, 2, 3, 4, 5, 6, 7, 8])
        #expect(written { $0.bigEndianField(1, 0x0A, 0x0B) } == [0x0A, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x0A, 0, 0, 0, 0, 0, 0, 0, 0x0B])
        #expect(written { $0.packedFixed64Field(6, [UInt64]()) } == [])
        #expect(written { $0.packedFixed64Field(6, [1, 2] as [UInt64]) } == [0x32, 0x10, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test func stringsAreTheirUTF8BytesAfterTheirLength() {
        #expect(written { $0.stringField(1, "") } == [0x0A, 0x00])
        #expect(written { $0.stringField(5, "hé") } == [0x2A, 0x03, 0x68, 0xC3, 0xA9])
    }

    @Test(arguments: [0, 1, 127, 128, 200, 16_383, 16_384, 70_000])
    func aNestedMessageCarriesItsExactLengthHoweverLong(_ length: Int) {
        let text = String(repeating: "x", count: length)
        let bytes = written { writer in
            writer.messageField(9) { $0.stringField(1, text) }
            writer.varintField(2, 1)
        }
        // The inner field: tag, its length as a varint, the bytes.
        var inner: [UInt8] = [0x0A]
        var rest = UInt64(length)
        while rest >= 0x80 {
            inner.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        inner.append(UInt8(rest))
        inner += Array(text.utf8)
        var expected: [UInt8] = [0x4A]
        rest = UInt64(inner.count)
        while rest >= 0x80 {
            expected.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        expected.append(UInt8(rest))
        expected += inner + [0x10, 0x01]
        #expect(bytes == expected)
    }

    @Test func messagesNestWithEachLengthItsOwn() {
        let bytes = written { writer in
            writer.messageField(1) { outer in
                outer.messageField(2) { $0.varintField(1, 150) }
                outer.stringField(3, String(repeating: "a", count: 130))
            }
        }
        // outer: [0x12 0x03 0x08 0x96 0x01] (5 bytes) + [0x1A 0x82 0x01 + 130 bytes] (133) = 138 = 0x8A 0x01.
        #expect(Array(bytes.prefix(8)) == [0x0A, 0x8A, 0x01, 0x12, 0x03, 0x08, 0x96, 0x01])
        #expect(Array(bytes[8..<11]) == [0x1A, 0x82, 0x01])
        #expect(bytes.count == 3 + 138)
    }
}
