/// Reported after every acknowledged batch, once the acknowledgement is stored durably.
///
/// ```swift
/// _ = try await client.run { progress in print("\(progress.acknowledgedSeq)/\(progress.headSeq)") }
/// ```
public struct SyncProgress: Sendable, Hashable {
    /// Records the server acknowledged during this run (appended or duplicate).
    public var uploaded: Int
    /// The highest seq the server holds.
    public var acknowledgedSeq: UInt64
    /// The local log's last seq when the batch was read.
    public var headSeq: UInt64

    public init(uploaded: Int, acknowledgedSeq: UInt64, headSeq: UInt64) {
        self.uploaded = uploaded
        self.acknowledgedSeq = acknowledgedSeq
        self.headSeq = headSeq
    }
}
