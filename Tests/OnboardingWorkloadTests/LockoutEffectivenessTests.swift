import OnboardingProjections
@testable import OnboardingWorkload
import Testing

/// Sanity of the effectiveness report at small sizes (1 simulated day, 500 users).
@Suite struct LockoutEffectivenessTests {
    static let parameters = LockoutEffectiveness.Parameters(
        seed: 1, userCount: 500, deviceCount: 100, days: 1,
        honestEventsPerDay: 8_000, stuffingIntervalMilliseconds: 20_000,
        sprayingIntervalMilliseconds: 60_000)
    static let rows = LockoutEffectiveness.report(parameters)

    static func row(_ name: String) -> LockoutEffectiveness.Row {
        rows.first { $0.policy == name }!
    }

    @Test func oneRowPerPresetInOrder() {
        #expect(Self.rows.map(\.policy) == LockoutPolicy.presets.map(\.name))
    }

    @Test func isDeterministic() {
        #expect(LockoutEffectiveness.report(Self.parameters, policies: [.mediawiki]) == [Self.row("mediawiki")])
    }

    @Test func nistLetsTheBruteForcerLockFastestAndStopsItAtOneHundred() {
        let nist = Self.row("nist"), mediawiki = Self.row("mediawiki")
        // NIST has no rate limit: 100 guesses in about 100 s, then a permanent lock that only a
        // reset lifts. MediaWiki has 5 per 5 minutes but lets 150 through per 48 hours.
        #expect(nist.bruteForcePermanentlyLocked)
        #expect(nist.medianTimeToLockMilliseconds.map { $0 < 200_000 } == true)
        #expect(mediawiki.medianTimeToLockMilliseconds.map { $0 < 10_000 } == true)
        #expect(nist.bruteForceGuessesPerDay >= 100)
        #expect(mediawiki.bruteForceGuessesPerDay >= 150)
        // Each password reset by the victim (who meets the global lock) gives the attacker another
        // hundred, with no rate limit: NIST lets far more guesses through per day.
        #expect(
            nist.bruteForceGuessesPerDay > 1.5 * mediawiki.bruteForceGuessesPerDay,
            "nist \(nist.bruteForceGuessesPerDay), mediawiki \(mediawiki.bruteForceGuessesPerDay)")
    }

    @Test func owaspLocksTheBruteForcerPermanently() {
        let owasp = Self.row("owasp")
        #expect(owasp.bruteForcePermanentlyLocked)
        #expect(owasp.bruteForceGuessesPerDay < Self.row("mediawiki").bruteForceGuessesPerDay)
    }

    @Test func mediawikiLocksFewHonestUsers() {
        let mediawiki = Self.row("mediawiki")
        #expect(mediawiki.honestUsers > 400)
        #expect(mediawiki.honestLockedOutShare < 0.05, "\(mediawiki.honestUsersLockedOut) of \(mediawiki.honestUsers)")
    }

    @Test func perAccountLimitsBarelyTouchStuffing() {
        for row in Self.rows {
            #expect(row.stuffingGuessesPerAccountPerDay >= 1 && row.stuffingGuessesPerAccountPerDay < 2, "\(row.policy)")
        }
    }
}
