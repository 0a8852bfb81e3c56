#!/usr/bin/env bash
# Runs the whole test suite in two phases (docs/testing.md § Timing-sensitive suites):
#
#   1. every suite but the timing-sensitive ones, all in parallel, built with warnings as errors;
#   2. the timing-sensitive ones — deadlines, rate limits, long polls, 60 concurrent uploads —
#      in parallel among themselves only, so that the first phase's 800 tests, child processes,
#      chromium and schemathesis are not competing with them for the machine's 2 cores.
#
# Arguments go to both `swift test` runs (e.g. --parallel is not needed; Swift Testing runs in
# parallel by default). Exits non-zero when either phase fails; both always run, and each
# prints its time, and so does the whole.
#
#   tools/test.sh --fast [ARGS]   the fast set only: every suite not marked `.slow` (no child
#                                 process, server, database, browser or 10^5 records), in one
#                                 run, in under a minute (docs/testing.md § The fast set)
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ ${1:-} == --fast ]]; then
    shift
    started=$SECONDS
    ONBOARD_TEST_FAST=1 swift test -Xswiftc -warnings-as-errors "$@"
    status=$?
    echo "test: the fast set took $((SECONDS - started)) s (exit $status); tools/test.sh without --fast runs everything" >&2
    exit $status
fi
suite_started=$SECONDS

# Suites whose assertions are about time (an answer within a deadline, a bucket that has not
# refilled, a poll still waiting after 300 ms): anchored test-id prefixes.
timing='^(HTTPServerTests\.(HTTPDeferredAnswerTests|HTTPServerLimitsTests)|OnboardCLITests\.(ResumeAfterKillTests|ServeConfigurationTests|ServeLimitsTests)|OnboardingServerTests\.(HistoryConsoleTests|RateLimitTests|SyncHTTPTests)|OnboardingSyncTests\.TransportTests)/'

log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_phase() {
    local name=$1
    shift
    local started=$SECONDS
    echo "test: $name" >&2
    swift test "$@" 2>&1 | tee "$log"
    local status=${PIPESTATUS[0]}
    echo "test: $name took $((SECONDS - started)) s (exit $status)" >&2
    # A pattern that matched nothing would pass in silence: a phase must run tests.
    if ((status == 0)) && ! grep -qE "Test run with [1-9][0-9]* tests" "$log"; then
        echo "test: $name ran no test; the timing pattern in tools/test.sh no longer matches the suites" >&2
        return 1
    fi
    return $status
}

run_phase "phase 1 of 2: all but the timing-sensitive suites" -Xswiftc -warnings-as-errors --skip "$timing" "$@"
first=$?
run_phase "phase 2 of 2: the timing-sensitive suites" --skip-build --filter "$timing" "$@"
second=$?
if ((first != 0 || second != 0)); then
    echo "test: failed (phase 1 exit $first, phase 2 exit $second) after $((SECONDS - suite_started)) s" >&2
    exit 1
fi
echo "test: every suite passed in $((SECONDS - suite_started)) s" >&2
