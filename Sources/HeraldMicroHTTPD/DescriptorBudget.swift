import Foundation

/// How many connections the process's limit on open descriptors leaves room for.
public enum DescriptorBudget {
    /// Raises the soft limit on open descriptors to the hard one (the soft limit is often 1,024, the
    /// hard one far higher; epoll has no FD_SETSIZE ceiling) and returns the soft limit now in force.
    public static func raiseSoftLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// The connections that fit in `descriptors` with `threads` event loops. A connection may hold two
    /// descriptors (its socket, and a copy of a shared body's file while that is sent); an event loop
    /// holds five (MHD's epoll and wake-up descriptors, its copy of the listening socket, a command pipe);
    /// and 256 stay for the rest: SQLite's writer and readers with their journals, the logs, the
    /// in-memory files of cached feeds.
    public static func connectionCapacity(descriptors: Int, threads: Int) -> Int {
        max(0, (descriptors - 256 - 5 * threads) / 2)
    }

    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
}
