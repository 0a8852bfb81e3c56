/// When an appended event is safe from a power loss.
///
/// - `full` (default): `append` returns after the commit reached the disk (LMDB's fsync).
///   Concurrent appenders share one transaction and one fsync (group commit).
/// - `relaxed`: commits skip the fsync (`MDB_NOSYNC`) and a background task flushes at most
///   ``OnboardingStore/Options/relaxedSyncIntervalMilliseconds`` later. A crash of the process loses
///   nothing (the data is in the OS page cache); a power loss may lose the last interval.
public enum Durability: String, Sendable, CaseIterable {
    case full
    case relaxed
}
