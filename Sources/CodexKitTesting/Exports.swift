// The loopback HTTP/1.1 server (its own target, shared with codexctl's offline demo and benchmarks) is
// part of the testing product: a host's tests get it with `import CodexKitTesting`.
@_exported public import CodexLoopback
