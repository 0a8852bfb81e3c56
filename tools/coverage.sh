#!/usr/bin/env bash
# Line coverage of Sources/ by the test suite (docs/testing.md § Coverage).
#
#   tools/coverage.sh [--full] [SWIFT TEST ARGS]
#   tools/coverage.sh --report       the figures of the last run again, without running the tests
#
# Runs `swift test --enable-code-coverage` — the fast set (ONBOARD_TEST_FAST=1) by default,
# every suite with --full; other arguments go to `swift test` (e.g. --filter LockoutEngineTests)
# — then reads the profile SwiftPM merges (`swift test --show-codecov-path`) with llvm-cov,
# counting only Sources/ (no Tests/, no .build/ checkouts, no C shims: Sources/C*), and prints
# the line coverage of each module and of the whole, the 15 least-covered files, and the 15
# least-covered files of the modules the run reached at all (a filtered or fast run leaves whole
# modules at 0%, which would fill the first list).
#
# The instrumented build lives in its own scratch directory (.build/coverage, or
# $ONBOARD_COVERAGE_SCRATCH), so it never invalidates the ordinary build in .build/. The full
# report is left in that directory: coverage.json (`llvm-cov export -summary-only`) and
# coverage.txt (`llvm-cov report`). Exits with the tests' status once the report is printed
# (a failed test still leaves a profile), or 1 when there is no profile to read.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

fast=1 run=1
if [[ ${1:-} == --full ]]; then
    fast=0
    shift
elif [[ ${1:-} == --report ]]; then
    run=0
    shift
fi
scratch=${ONBOARD_COVERAGE_SCRATCH:-.build/coverage}

started=$SECONDS
status=0
if ((!run)); then
    echo "coverage: the last run's profile (--report)" >&2
elif ((fast)); then
    echo "coverage: the fast set (ONBOARD_TEST_FAST=1); --full runs every suite" >&2
    ONBOARD_TEST_FAST=1 swift test --scratch-path "$scratch" --enable-code-coverage "$@"
else
    echo "coverage: every suite" >&2
    swift test --scratch-path "$scratch" --enable-code-coverage "$@"
fi
if ((run)); then
    status=$?
    echo "coverage: swift test took $((SECONDS - started)) s (exit $status)" >&2
fi

profile_json=$(swift test --scratch-path "$scratch" --show-codecov-path)
profdata="$(dirname "$profile_json")/default.profdata"
binary="$(swift build --scratch-path "$scratch" --show-bin-path)/OnboardingStorePackageTests.xctest"
if [[ ! -f $profdata || ! -f $binary ]]; then
    echo "coverage: no profile ($profdata) or test binary ($binary) to read" >&2
    exit 1
fi

# llvm-cov's SOURCES arguments keep files under Sources/; the regex drops the C shims there.
sources="$(pwd -P)/Sources"
ignore='/Sources/C[A-Z][A-Za-z]*/'
llvm-cov report "$binary" -instr-profile="$profdata" -ignore-filename-regex="$ignore" "$sources" > "$scratch/coverage.txt"
llvm-cov export "$binary" -instr-profile="$profdata" -ignore-filename-regex="$ignore" -summary-only "$sources" > "$scratch/coverage.json"

python3 - "$scratch/coverage.json" "$sources" <<'PY'
import json, sys
from collections import defaultdict

report, sources = sys.argv[1], sys.argv[2].rstrip("/") + "/"
files = []
for data in json.load(open(report))["data"]:
    for entry in data["files"]:
        name = entry["filename"]
        if not name.startswith(sources):
            continue
        lines = entry["summary"]["lines"]
        files.append((name[len(sources):], lines["count"], lines["covered"]))

def percent(covered, count):
    return 100.0 * covered / count if count else 100.0

modules = defaultdict(lambda: [0, 0])
for name, count, covered in files:
    module = modules[name.split("/", 1)[0]]
    module[0] += count
    module[1] += covered

print("line coverage of Sources/ by module")
print(f"  {'module':<24} {'lines':>7} {'covered':>8} {'cover':>7}")
for module, (count, covered) in sorted(modules.items()):
    print(f"  {module:<24} {count:>7} {covered:>8} {percent(covered, count):>6.1f}%")
total = sum(c for _, c, _ in files)
covered = sum(c for _, _, c in files)
print(f"  {'total':<24} {total:>7} {covered:>8} {percent(covered, total):>6.1f}%")
print()
def least_covered(title, candidates):
    print(title)
    worst = sorted(candidates, key=lambda f: (percent(f[2], f[1]), -(f[1] - f[2])))[:15]
    for name, count, covered in worst:
        print(f"  {percent(covered, count):>6.1f}%  {covered:>5}/{count:<5}  {name}")

least_covered("the 15 least-covered files (by line coverage, then by lines missed)", files)
reached = {module for module, (_, covered) in modules.items() if covered}
print()
least_covered("the 15 least-covered files of the modules the run reached",
              [f for f in files if f[0].split("/", 1)[0] in reached])
PY
echo "coverage: the whole report is in $scratch/coverage.txt and $scratch/coverage.json" >&2
exit $status
