#!/usr/bin/env bash
# Builds the fuzz targets (libFuzzer + AddressSanitizer, release) and runs each for a bounded
# time on its committed seed corpus; fails when any target finds a crash. docs/testing.md says
# how to run them for hours and how to turn a crash into a regression test.
#
#   FuzzTesting/run.sh                         # every target, 30 s each (what .ci/run does)
#   FuzzTesting/run.sh --time 600 FuzzRouter   # one target, 10 minutes
#   FuzzTesting/run.sh --corpus-dir ~/fuzz     # keep what the run learns (one subdirectory per target)
#   FuzzTesting/run.sh --make-corpus           # rewrite Corpus/ and Dictionaries/ from the fixtures
set -euo pipefail
cd "$(dirname "$0")"
export PATH="/opt/swift/usr/bin:$PATH"

all_targets=(FuzzRecordCodec FuzzEventLine FuzzUploadBody FuzzRouter FuzzLockoutPolicy FuzzServerAnswer FuzzLogLine FuzzIdentityLog)
seconds=30
# Per input: a server request takes milliseconds; 10 s is a hang, not a slow input.
timeout_seconds=10
# ASan's shadow memory and the server's LMDB maps add up; 2 GiB leaves room and still stops a
# target whose memory grows without bound long before the machine notices.
rss_limit_mb=2048
# The largest seed (a whole upload) is about 16 KiB; 64 KiB lets inputs grow past every limit
# the readers check without slowing each run down.
max_len=65536
corpus_dir=""
make_corpus=false
targets=()

usage() {
    sed -n '2,10p' "$0" | sed -e 's/^# \{0,1\}//'
}

while (($#)); do
    case "$1" in
        --time) seconds="$2"; shift 2 ;;
        --corpus-dir) corpus_dir="$2"; shift 2 ;;
        --make-corpus) make_corpus=true; shift ;;
        -h|--help) usage; exit 0 ;;
        Fuzz*) targets+=("$1"); shift ;;
        *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
    esac
done
((${#targets[@]})) || targets=("${all_targets[@]}")
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --time takes a whole number of seconds, got $seconds" >&2; exit 64; }

if $make_corpus; then
    # The generator is an ordinary executable: built without sanitizers, in its own build directory.
    swift build --scratch-path .build/corpus --product make-fuzz-corpus
    .build/corpus/debug/make-fuzz-corpus .
    exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/onboard-fuzz-run.XXXXXX")
trap 'rm -rf "$work"' EXIT

# -enable-testing: FuzzRecordCodec compares the fast and reference body decoders, which are
# internal to OnboardingModel, and FuzzLogLine runs OnboardingImport's LineDecoder (`@testable import`).
build_flags=(-c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -enable-testing
             -Xswiftc -warnings-as-errors)
for target in "${targets[@]}"; do
    echo "fuzz: building $target" >&2
    if ! swift build "${build_flags[@]}" --product "$target" >"$work/build.log" 2>&1; then
        cat "$work/build.log" >&2
        echo "fuzz: building $target failed" >&2
        exit 1
    fi
    # gold's note about an ASan symbol is harmless; anything else is worth seeing.
    grep -v "Cannot export local symbol '__asan_extra_spill_area'" "$work/build.log" | grep -E "warning|error" >&2 || true
done
bin=$(swift build "${build_flags[@]}" --show-bin-path)
# The Swift runtime's own crash handler would race ASan's and libFuzzer's reports.
export SWIFT_BACKTRACE=enable=no

declare -A executions rate resets status
failed=()
for target in "${targets[@]}"; do
    grown="${corpus_dir:-$work/corpus}/$target"
    artifacts="$work/artifacts/$target"
    mkdir -p "$grown" "$artifacts"
    log="$work/$target.log"
    echo "fuzz: running $target for $seconds s" >&2
    # New inputs go to the first directory (never the committed seeds, which are read only).
    set +e
    "$bin/$target" "$grown" "Corpus/$target" -dict="Dictionaries/$target.dict" \
        -max_total_time="$seconds" -timeout="$timeout_seconds" -rss_limit_mb="$rss_limit_mb" -max_len="$max_len" \
        -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1
    code=$?
    set -e
    executions[$target]=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
    rate[$target]=$(grep -m1 'stat::average_exec_per_sec' "$log" | awk '{print $2}' || true)
    resets[$target]=$(grep -m1 'ServerHarness: the server was reset' "$log" | awk '{print $6}' || true)
    if ((code == 0)); then
        status[$target]=ok
    else
        status[$target]="FAILED (exit $code)"
        failed+=("$target")
        echo "fuzz: $target failed; the end of its log:" >&2
        grep -v '^\s*$' "$log" | tail -n 60 >&2
        for artifact in "$artifacts"/*; do
            [[ -e $artifact ]] || continue
            mkdir -p Crashes
            kept="$(pwd)/Crashes/$target-$(basename "$artifact")"
            cp "$artifact" "$kept"
            echo "fuzz: the input is kept at $kept (hex: $(head -c 512 "$artifact" | od -An -tx1 | tr -d ' \n'))" >&2
            echo "fuzz: replay it with $bin/$target $kept" >&2
        done
    fi
done

echo
printf '%-20s %14s %10s %14s  %s\n' target executions 'exec/s' 'server resets' result
for target in "${targets[@]}"; do
    printf '%-20s %14s %10s %14s  %s\n' "$target" "${executions[$target]:-?}" "${rate[$target]:-?}" "${resets[$target]:--}" "${status[$target]}"
done
if ((${#failed[@]})); then
    echo "fuzz: ${#failed[@]} target(s) found a crash: ${failed[*]} (docs/testing.md: turning a crash into a regression test)" >&2
    exit 1
fi
