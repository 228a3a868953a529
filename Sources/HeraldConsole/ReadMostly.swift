import Foundation

/// A value every request reads and few write (the API key and feed caches), behind a reader-writer
/// lock, so readers never wait for each other. Synchronization's `Mutex` spins while its holder
/// runs: with more request threads than cores the holder is often descheduled, and the feed path
/// spent 40 % of its time spinning on one.
final class ReadMostly<Value: Sendable>: @unchecked Sendable {
    // Reached only with `lock` held: shared for `read`, exclusive for `write`.
    private var value: Value
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    init(_ value: Value) {
        self.value = value
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func read<Result>(_ body: (Value) throws -> Result) rethrows -> Result {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(value)
    }

    func write<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&value)
    }
}
