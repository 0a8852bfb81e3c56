import Foundation
import Testing
import OnboardingModel

/// `Timestamp` with `Date`, the system clock and `Duration`: to the millisecond, rounded toward
/// the past, never trapping at the ends of the range.
@Suite("Timestamp: Date, now and Duration")
struct TimestampDateTests {
    @Test("Date round trips to the millisecond; fractions round toward the past, also before 1970")
    func dateBridge() {
        let at = Timestamp(millisecondsSince1970: 1_796_054_400_123)
        #expect(Timestamp(at.date) == at)
        #expect(at.date == Date(timeIntervalSince1970: 1_796_054_400.123))
        #expect(Timestamp(Date(timeIntervalSince1970: 1.0009)).millisecondsSince1970 == 1000)
        #expect(Timestamp(Date(timeIntervalSince1970: -0.0005)).millisecondsSince1970 == -1)
        #expect(Timestamp(Date(timeIntervalSince1970: 0)).millisecondsSince1970 == 0)
        for edge in [Timestamp.minimum, .maximum] {
            #expect(Timestamp(edge.date) == edge, "\(edge)")
        }
        // Dates no millisecond count holds stop at the ends instead of trapping.
        #expect(Timestamp(Date(timeIntervalSince1970: 1e300)).millisecondsSince1970 == .max)
        #expect(Timestamp(Date(timeIntervalSince1970: -1e300)).millisecondsSince1970 == .min)
        #expect(Timestamp(Date(timeIntervalSince1970: .infinity)).millisecondsSince1970 == .max)
        #expect(Timestamp(Date(timeIntervalSince1970: .nan)).millisecondsSince1970 == 0)
    }

    @Test("now is the system clock, to the millisecond")
    func now() {
        let before = Date()
        let now = Timestamp.now
        let after = Date()
        #expect(now >= Timestamp(before) && now <= Timestamp(after))
    }

    @Test("Duration arithmetic: exact milliseconds, fractions toward the past, saturating at the ends")
    func durations() {
        let at = Timestamp(millisecondsSince1970: 1_000_000)
        #expect((at + .seconds(300)).millisecondsSince1970 == 1_300_000)
        #expect((at - .milliseconds(1)).millisecondsSince1970 == 999_999)
        #expect((at + .microseconds(1_999)).millisecondsSince1970 == 1_000_001)
        #expect((at + .microseconds(-1)).millisecondsSince1970 == 999_999, "−1 µs falls in the millisecond before")
        #expect((at - .microseconds(1)).millisecondsSince1970 == 999_999)
        #expect((at - .microseconds(-1_500)).millisecondsSince1970 == 1_000_001)
        #expect((at + .zero) == at)
        var moving = at
        moving += .seconds(1)
        moving -= .milliseconds(250)
        #expect(moving.millisecondsSince1970 == 1_000_750)
        #expect(Timestamp(millisecondsSince1970: 1_300_000) - at == .seconds(300))
        #expect(at - Timestamp(millisecondsSince1970: 1_300_000) == .seconds(-300))
        // Hostile sizes: 0, −1 and the ends of Int64, in both directions, never trap.
        let top = Timestamp(millisecondsSince1970: .max), bottom = Timestamp(millisecondsSince1970: .min)
        #expect(top + .seconds(1) == top && bottom - .seconds(1) == bottom)
        #expect((top + .seconds(-1)).millisecondsSince1970 == .max - 1000)
        #expect(at + .seconds(Int64.max) == top && at - .seconds(Int64.max) == bottom)
        #expect(at + .seconds(Int64.min) == bottom && at - .seconds(Int64.min) == top)
        #expect(top - bottom > .seconds(Int64.max / 1000 * 2 - 2), "more than Int64 milliseconds apart: still ordered")
        #expect(bottom - top < .zero)
        #expect((at + .seconds(-1)) < at && (at - .seconds(-1)) > at)
    }

    @Test("a far-future or far-past result is still refused where an event is checked")
    func outOfRangeStaysRefused() {
        let event = Event(
            id: UUID(), device: "kiosk-7", at: .maximum + .milliseconds(1), user: nil, flow: nil,
            payload: .captchaPassed)
        #expect(throws: EventValidationError.self) { try event.validate() }
    }
}
