@testable import CodexRecovery
import Glibc
import Synchronization

/// The real file system with scripted failures: `fail(.syncFile, errno: EIO, at: 2)` makes the second
/// file `fsync` from now on fail with `EIO`; `persistent: true` fails that call and every later one
/// until ``heal()``. Counts every call per operation.
final class FaultInjectingFileSystem: RecoveryFileSystem {
    private struct Rule {
        var operation: RecoveryFileOperation
        var errorNumber: Int32
        var remainingBeforeFailure: Int
        var persistent: Bool
    }

    private struct State {
        var rules: [Rule] = []
        var calls: [RecoveryFileOperation: Int] = [:]
    }

    private let real = PosixRecoveryFileSystem()
    private let state = Mutex(State())

    /// Fails the `at`-th call (1-based, counted from now) of `operation` with `errorNumber`.
    func fail(_ operation: RecoveryFileOperation, errno errorNumber: Int32, at call: Int = 1, persistent: Bool = false) {
        state.withLock { $0.rules.append(Rule(operation: operation, errorNumber: errorNumber, remainingBeforeFailure: call - 1, persistent: persistent)) }
    }

    /// Removes every rule.
    func heal() {
        state.withLock { $0.rules.removeAll() }
    }

    /// How many calls of `operation` were made.
    func calls(_ operation: RecoveryFileOperation) -> Int {
        state.withLock { $0.calls[operation, default: 0] }
    }

    private func check(_ operation: RecoveryFileOperation) throws(RecoverySystemCallError) {
        let failure: Int32? = state.withLock { state in
            state.calls[operation, default: 0] += 1
            for index in state.rules.indices where state.rules[index].operation == operation {
                if state.rules[index].remainingBeforeFailure > 0 {
                    state.rules[index].remainingBeforeFailure -= 1
                    continue
                }
                let code = state.rules[index].errorNumber
                if !state.rules[index].persistent { state.rules.remove(at: index) }
                return code
            }
            return nil
        }
        if let failure { throw RecoverySystemCallError(operation, failure) }
    }

    func openDirectory(path: String) throws(RecoverySystemCallError) -> Int32 {
        try check(.open)
        return try real.openDirectory(path: path)
    }

    func openDirectory(in directory: Int32, name: String) throws(RecoverySystemCallError) -> Int32 {
        try check(.open)
        return try real.openDirectory(in: directory, name: name)
    }

    func makeDirectory(in directory: Int32, name: String, mode: mode_t) throws(RecoverySystemCallError) {
        try check(.makeDirectory)
        try real.makeDirectory(in: directory, name: name, mode: mode)
    }

    func openFile(in directory: Int32, name: String, flags: Int32, mode: mode_t) throws(RecoverySystemCallError) -> Int32 {
        try check(.open)
        return try real.openFile(in: directory, name: name, flags: flags, mode: mode)
    }

    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(RecoverySystemCallError) -> Int {
        try check(.read)
        return try real.read(descriptor, into: buffer)
    }

    func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(RecoverySystemCallError) -> Int {
        try check(.write)
        return try real.write(descriptor, from: buffer)
    }

    func sync(_ descriptor: Int32, directory: Bool) throws(RecoverySystemCallError) {
        try check(directory ? .syncDirectory : .syncFile)
        try real.sync(descriptor, directory: directory)
    }

    func rename(in directory: Int32, from: String, to: String) throws(RecoverySystemCallError) {
        try check(.rename)
        try real.rename(in: directory, from: from, to: to)
    }

    func unlink(in directory: Int32, name: String, directory isDirectory: Bool) throws(RecoverySystemCallError) {
        try check(.unlink)
        try real.unlink(in: directory, name: name, directory: isDirectory)
    }

    func status(_ descriptor: Int32) throws(RecoverySystemCallError) -> stat {
        try check(.status)
        return try real.status(descriptor)
    }

    func status(in directory: Int32, name: String) throws(RecoverySystemCallError) -> stat {
        try check(.status)
        return try real.status(in: directory, name: name)
    }

    func lockExclusively(_ descriptor: Int32, wait: Bool) throws(RecoverySystemCallError) -> Bool {
        try check(.lock)
        return try real.lockExclusively(descriptor, wait: wait)
    }

    func unlock(_ descriptor: Int32) { real.unlock(descriptor) }

    func changeMode(_ descriptor: Int32, to mode: mode_t) throws(RecoverySystemCallError) {
        try check(.changeMode)
        try real.changeMode(descriptor, to: mode)
    }

    func entries(of directory: Int32) throws(RecoverySystemCallError) -> [String] {
        try check(.listDirectory)
        return try real.entries(of: directory)
    }

    func close(_ descriptor: Int32) {
        real.close(descriptor)
    }
}
