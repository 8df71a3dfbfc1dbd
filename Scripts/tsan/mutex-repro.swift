// Two threads append to an array only inside Mutex.withLock, holding the lock long enough that the
// other thread must wait (the contended path). Every access is under the lock: there is no race.
import Foundation
import Synchronization

final class Box: Sendable {
    let state = Mutex<[Int]>([])
}

@main struct Repro {
    static func main() {
        let box = Box()
        let threads = (0..<2).map { n in
            Thread {
                for i in 0..<200 {
                    box.state.withLock { values in
                        values.append(n * 1000 + i)
                        usleep(50)
                    }
                }
            }
        }
        threads.forEach { $0.start() }
        while box.state.withLock({ $0.count }) < 400 { usleep(1000) }
        print("count", box.state.withLock { $0.count })
    }
}
