import OnboardingModel

/// The session at a time (docs/projections.md § State at a time).
///
/// The fold has no clock. What a screen shows at a time follows from the fold's state and the
/// lockout engine's decisions at that time: a flow on `locked_out` shows the lock in force for
/// its user then — of either factor, the one that ends last (a permanent lock first), or a
/// wait the app reported with `sign_in_throttled` that has not ended — with a message naming
/// the time left; when none is left, the flow is back on the form the refused attempt came
/// from, in the state its fields give. A resend timer that has ended is available.
///
/// ```swift
/// let now = Timestamp.now
/// let shown = state.session.session(device: "kiosk-7", at: now, lockout: state.lockout)
/// shown.flow.screen               // .signIn once the lock has ended
/// shown.nextChange(after: now)    // when it will show something else with no new event
/// ```
extension DeviceState {
    /// The device as its screen shows it at `time`, with `lockout` the engine folded over the
    /// same records: every time-driven part of the flow (the lock, its message, the resend
    /// timer) evaluated then.
    public func at(_ time: Timestamp, lockout: LockoutEngine) -> DeviceState {
        var state = self
        state.flow = flow.at(time, device: device, lockout: lockout)
        return state
    }

    /// The first instant after `time` at which this state, read at `time` (``at(_:lockout:)``),
    /// shows something else with no new event: the lock's message names one unit less, the lock
    /// ends, or the resend timer ends. `nil` when nothing in it waits on the clock.
    public func nextChange(after time: Timestamp) -> Timestamp? {
        var next: Timestamp?
        if flow.screen == .lockedOut, let until = flow.lockedUntil, until > time {
            let remaining = until.millisecondsSince1970 - time.millisecondsSince1970
            next = until.adding(milliseconds: -WaitWords.changeThreshold(remainingMilliseconds: remaining))
        }
        if let resend = flow.resend, !resend.isAvailable, resend.availableAt > time {
            next = next.map { min($0, resend.availableAt) } ?? resend.availableAt
        }
        return next
    }
}

extension Flow {
    /// The flow on `device` at `time` (``DeviceState/at(_:lockout:)``).
    func at(_ time: Timestamp, device: String, lockout: LockoutEngine) -> Flow {
        var flow = self
        if screen == .lockedOut {
            let engineLock = SessionProjection.lockInForce(user: user, device: device, at: time, lockout: lockout)
            // A wait the app reported (or the engine's, as the fold saw it) that has not ended.
            let reported = lockedUntil.flatMap { $0 > time ? $0 : nil }
            switch engineLock {
            case .permanentlyLocked(let lock):
                flow.lockedUntil = nil
                flow.systemMessage = Message(lock.message, .error)
            case .locked(let lock):
                flow.showTemporaryLock(until: max(lock.until, reported ?? lock.until), at: time, returningTo: unlockScreen ?? .signIn)
            case .allowed:
                if let reported {
                    flow.showTemporaryLock(until: reported, at: time, returningTo: unlockScreen ?? .signIn)
                } else {
                    flow.endLock()
                }
            }
        }
        if let resend, !resend.isAvailable, resend.availableAt <= time {
            flow.resend = ResendInfo(availableAt: resend.availableAt, help: SessionText.resendAvailableHelp, isAvailable: true)
        }
        return flow
    }

    /// Shows a temporary lock until `until`, as it reads at `time`; the flow returns to
    /// `returnScreen` when it ends.
    mutating func showTemporaryLock(until: Timestamp, at time: Timestamp, returningTo returnScreen: Screen) {
        screen = .lockedOut
        state = .error
        fieldMessages = []
        lockedUntil = until
        unlockScreen = returnScreen
        systemMessage = Message(SessionText.tooManyAttempts(waitMilliseconds: until.millisecondsSince1970 - time.millisecondsSince1970), .error)
    }

    /// The lock has ended: back on the form the refused attempt came from (the sign-in form when
    /// the flow does not say), with no message, in the state its fields give.
    mutating func endLock() {
        screen = unlockScreen ?? .signIn
        unlockScreen = nil
        lockedUntil = nil
        systemMessage = nil
        fieldMessages = []
        state = restingState
    }
}

extension SessionProjection {
    /// The session of `device` at `time`, `lockout` being the engine folded over the same
    /// records: ``session(device:)`` with every time-driven part evaluated then
    /// (``DeviceState/at(_:lockout:)``).
    public func session(device: String, at time: Timestamp, lockout: LockoutEngine) -> DeviceState {
        session(device: device).at(time, lockout: lockout)
    }

    /// The lock in force for `user` on `device` at `time` that the sign-in screen shows: a
    /// sign-in needs both factors, so of the password's and the second factor's decisions, a
    /// permanent lock first, else the temporary lock that ends last; `.allowed` when neither
    /// refuses.
    static func lockInForce(user: String?, device: String, at time: Timestamp, lockout: LockoutEngine) -> LockoutDecision {
        .stricter(
            lockout.decide(lockout.key(user: user, device: device, factor: .password), at: time),
            lockout.decide(lockout.key(user: user, device: device, factor: .secondFactor), at: time))
    }
}
