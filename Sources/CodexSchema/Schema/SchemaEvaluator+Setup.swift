/// How an evaluation is set up: the program's tables are borrowed as unsafe buffers for the length of
/// one call, and the program itself is read in place, so a validation copies nothing and counts no
/// references.
extension SchemaEvaluator {
    /// Runs `body` with an evaluator over `program` and `tape`.
    static func with<Output>(
        _ program: SchemaProgram, _ tape: JSONTapeView, _ body: (inout SchemaEvaluator) throws(CodexSchemaError) -> Output
    ) throws(CodexSchemaError) -> Output {
        let outcome: Result<Output, CodexSchemaError> = withUnsafePointer(to: program) { programPointer in
          program.nodes.withUnsafeBufferPointer { nodes in
            program.rules.withUnsafeBufferPointer { rules in
                program.children.withUnsafeBufferPointer { children in
                    program.bytes.withUnsafeBufferPointer { bytes in
                        program.stringRanges.withUnsafeBufferPointer { ranges in
                          program.stringHeads.withUnsafeBufferPointer { heads in
                           program.enumSlots.withUnsafeBufferPointer { enumSlots in
                            program.numbers.withUnsafeBufferPointer { numbers in
                              program.numberKeys.withUnsafeBufferPointer { numberKeys in
                                guard let nodes = nodes.baseAddress else {
                                    return .failure(CodexSchemaError(code: .invalidSchema, message: "schema program is empty"))
                                }
                                var evaluator = SchemaEvaluator(
                                    program: programPointer, nodes: nodes, rules: rules, children: children, keyBytes: bytes,
                                    stringRanges: ranges, stringHeads: heads, enumSlots: enumSlots, numbers: numbers, numberKeys: numberKeys,
                                    tape: tape
                                )
                                evaluator.errorLimit = program.limits.maximumReportedErrors
                                do throws(CodexSchemaError) {
                                    return .success(try body(&evaluator))
                                } catch {
                                    return .failure(error)
                                }
                              }
                            }
                           }
                          }
                        }
                    }
                }
            }
          }
        }
        return try outcome.get()
    }

    private init(
        program: UnsafePointer<SchemaProgram>,
        nodes: UnsafePointer<Node>,
        rules: UnsafeBufferPointer<SchemaProgram.Rule>,
        children: UnsafeBufferPointer<Int32>,
        keyBytes: UnsafeBufferPointer<UInt8>,
        stringRanges: UnsafeBufferPointer<SchemaProgram.Span>,
        stringHeads: UnsafeBufferPointer<UInt64>,
        enumSlots: UnsafeBufferPointer<Int32>,
        numbers: UnsafeBufferPointer<JSONNumber>,
        numberKeys: UnsafeBufferPointer<SchemaProgram.NumberKey>,
        tape: JSONTapeView
    ) {
        self.programPointer = program
        self.nodes = nodes
        self.rules = rules
        self.children = children
        self.keyBytes = keyBytes
        self.stringRanges = stringRanges
        self.stringHeads = stringHeads
        self.enumSlots = enumSlots
        self.numbers = numbers
        self.numberKeys = numberKeys
        self.tape = tape
    }
}
