// The loopback HTTP server (its own target, shared with codexctl's demo and benchmarks) is part of the
// test support every test target imports.
@_exported public import CodexLoopback
