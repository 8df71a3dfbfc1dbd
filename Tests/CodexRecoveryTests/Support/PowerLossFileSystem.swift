@testable import CodexRecovery
import Foundation
import Glibc
import Synchronization

/// A file system that does every call for real (the real directory is the volatile image, what a
/// process crash would leave) and also keeps a model of what a power loss would leave: directory
/// entries become durable only when their directory is fsynced, file contents only when the file is
/// fsynced. It snapshots both after every call, so a test can rebuild the disk as it was at any point.
final class PowerLossFileSystem: RecoveryFileSystem {
    /// A directory entry: a file (by inode number in the model) or a subdirectory (by path).
    enum Entry: Hashable, Sendable {
        case file(Int)
        case directory(String)
    }

    /// One directory: its live entries and those a power loss would keep.
    struct Directory: Sendable {
        var live: [String: Entry] = [:]
        var durable: [String: Entry] = [:]
    }

    /// One file: its live bytes and the bytes as of its last fsync (`nil`: never synced).
    struct Inode: Sendable {
        var live: [UInt8] = []
        var durable: [UInt8]?
    }

    /// The whole model at one moment.
    struct Image: Sendable {
        var directories: [String: Directory] = [:]
        var inodes: [Int: Inode] = [:]
        /// What happened just before this image, e.g. "rename .x.tmp -> x.json".
        var step = "start"
    }

    /// How to rebuild the disk from an image.
    enum Variant: String, CaseIterable, Sendable {
        /// Only what was fsynced: durable entries, durable contents.
        case durable
        /// Directory operations reached the disk but unsynced file data did not.
        case entriesAhead
        /// Everything the process wrote (what a process crash leaves).
        case live
    }

    private struct State {
        var image = Image()
        var nextInode = 1
        var descriptors: [Int32: (path: String, inode: Int?)] = [:]
        var history: [Image] = []
    }

    private let real = PosixRecoveryFileSystem()
    private let state: Mutex<State>

    /// Models `top` (an existing, empty directory) as durable and empty.
    init(top: String) {
        var initial = State()
        initial.image.directories[top] = Directory()
        state = Mutex(initial)
    }

    /// Every image so far, one per call.
    var history: [Image] { state.withLock { $0.history } }

    /// The number of images so far (a milestone marker for the test).
    var step: Int { state.withLock { $0.history.count } }

    private func record(_ step: String, _ change: (inout State) -> Void) {
        state.withLock { state in
            change(&state)
            state.image.step = step
            state.history.append(state.image)
        }
    }

    private static func join(_ directory: String, _ name: String) -> String { directory + "/" + name }

    func openDirectory(path: String) throws(RecoverySystemCallError) -> Int32 {
        let fd = try real.openDirectory(path: path)
        state.withLock { $0.descriptors[fd] = (path, nil) }
        return fd
    }

    func openDirectory(in directory: Int32, name: String) throws(RecoverySystemCallError) -> Int32 {
        let fd = try real.openDirectory(in: directory, name: name)
        state.withLock { state in
            let parent = state.descriptors[directory]?.path ?? "?"
            state.descriptors[fd] = (Self.join(parent, name), nil)
        }
        return fd
    }

    func makeDirectory(in directory: Int32, name: String, mode: mode_t) throws(RecoverySystemCallError) {
        try real.makeDirectory(in: directory, name: name, mode: mode)
        record("mkdir \(name)") { state in
            let parent = state.descriptors[directory]?.path ?? "?"
            let path = Self.join(parent, name)
            state.image.directories[parent, default: Directory()].live[name] = .directory(path)
            state.image.directories[path] = Directory()
        }
    }

    func openFile(in directory: Int32, name: String, flags: Int32, mode: mode_t) throws(RecoverySystemCallError) -> Int32 {
        let fd = try real.openFile(in: directory, name: name, flags: flags, mode: mode)
        record("open \(name)") { state in
            let parent = state.descriptors[directory]?.path ?? "?"
            if case .file(let inode)? = state.image.directories[parent]?.live[name] {
                state.descriptors[fd] = (Self.join(parent, name), inode)
            } else {
                let inode = state.nextInode
                state.nextInode += 1
                state.image.inodes[inode] = Inode()
                state.image.directories[parent, default: Directory()].live[name] = .file(inode)
                state.descriptors[fd] = (Self.join(parent, name), inode)
            }
        }
        return fd
    }

    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(RecoverySystemCallError) -> Int {
        try real.read(descriptor, into: buffer)
    }

    func write(_ descriptor: Int32, from buffer: UnsafeRawBufferPointer) throws(RecoverySystemCallError) -> Int {
        let count = try real.write(descriptor, from: buffer)
        let bytes = Array(buffer.prefix(count))
        record("write \(count)") { state in
            if let inode = state.descriptors[descriptor]?.inode { state.image.inodes[inode]?.live += bytes }
        }
        return count
    }

    func sync(_ descriptor: Int32, directory: Bool) throws(RecoverySystemCallError) {
        try real.sync(descriptor, directory: directory)
        record(directory ? "fsync directory" : "fsync file") { state in
            guard let entry = state.descriptors[descriptor] else { return }
            if directory {
                if var model = state.image.directories[entry.path] {
                    model.durable = model.live
                    state.image.directories[entry.path] = model
                }
            } else if let inode = entry.inode, var model = state.image.inodes[inode] {
                model.durable = model.live
                state.image.inodes[inode] = model
            }
        }
    }

    func rename(in directory: Int32, from: String, to: String) throws(RecoverySystemCallError) {
        try real.rename(in: directory, from: from, to: to)
        record("rename \(from) -> \(to)") { state in
            let parent = state.descriptors[directory]?.path ?? "?"
            guard let entry = state.image.directories[parent]?.live[from] else { return }
            state.image.directories[parent]?.live[to] = entry
            state.image.directories[parent]?.live[from] = nil
        }
    }

    func unlink(in directory: Int32, name: String, directory isDirectory: Bool) throws(RecoverySystemCallError) {
        try real.unlink(in: directory, name: name, directory: isDirectory)
        record("unlink \(name)") { state in
            let parent = state.descriptors[directory]?.path ?? "?"
            state.image.directories[parent]?.live[name] = nil
        }
    }

    func status(_ descriptor: Int32) throws(RecoverySystemCallError) -> stat { try real.status(descriptor) }
    func status(in directory: Int32, name: String) throws(RecoverySystemCallError) -> stat { try real.status(in: directory, name: name) }
    func lockExclusively(_ descriptor: Int32, wait: Bool) throws(RecoverySystemCallError) -> Bool { try real.lockExclusively(descriptor, wait: wait) }
    func unlock(_ descriptor: Int32) { real.unlock(descriptor) }
    func changeMode(_ descriptor: Int32, to mode: mode_t) throws(RecoverySystemCallError) { try real.changeMode(descriptor, to: mode) }
    func entries(of directory: Int32) throws(RecoverySystemCallError) -> [String] { try real.entries(of: directory) }

    func close(_ descriptor: Int32) {
        real.close(descriptor)
        state.withLock { _ = $0.descriptors.removeValue(forKey: descriptor) }
    }

    /// Writes the disk as `image` would leave it under `variant` into `destination` (which mirrors
    /// `top`). Lock files come back empty; their content (the quota ledger) is rebuilt at open anyway.
    static func materialize(_ image: Image, variant: Variant, top: String, into destination: String) throws {
        func build(_ path: String, at target: String) throws {
            guard let directory = image.directories[path] else { return }
            let entries = variant == .durable ? directory.durable : directory.live
            for (name, entry) in entries {
                let child = target + "/" + name
                switch entry {
                case .directory(let childPath):
                    guard mkdir(child, 0o700) == 0 else { throw POSIXError(.EIO) }
                    try build(childPath, at: child)
                case .file(let inode):
                    let model = image.inodes[inode] ?? Inode()
                    let bytes: [UInt8] = variant == .live ? model.live : (model.durable ?? [])
                    let fd = open(child, O_WRONLY | O_CREAT | O_EXCL, 0o600)
                    guard fd >= 0 else { throw POSIXError(.EIO) }
                    _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                    Glibc.close(fd)
                }
            }
        }
        try build(top, at: destination)
    }
}
