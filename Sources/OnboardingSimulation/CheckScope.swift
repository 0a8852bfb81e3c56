/// What a step may have changed, so that the checks after it read what could break (the rest
/// cannot have changed); every ``Simulator/fullSweepSteps`` steps, and at the end, everything
/// is read again in full anyway.
struct CheckScope {
    /// Devices whose log or store changed (new records, a cursor): their new records are read,
    /// their projections compared with a rebuild.
    var devices: Set<Int> = []
    /// Devices whose every record must be read again (reopened, forgot a user, pruned).
    var fullDevices: Set<Int> = []
    /// Replicas that may have changed (a request of their device reached the server).
    var replicas: Set<Int> = []
    /// Replicas whose every record must be read again (the server restarted or forgot a user).
    var fullReplicas: Set<Int> = []
    /// Everything, in full.
    var everything = false
}
