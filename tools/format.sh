#!/usr/bin/env bash
# swift format over every Swift file of the repository, with the configuration in .swift-format
# (docs/testing.md § Formatting).
#
#   tools/format.sh          rewrite the files in place
#   tools/format.sh --check  change nothing; list each file that is not formatted and exit 1
#
# `swift format` ships with the toolchain; nothing is fetched.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

paths=(Package.swift Sources Tests Benchmarks FuzzTesting/Package.swift FuzzTesting/Sources Examples)

case "${1:-}" in
    "")
        swift format format --in-place --recursive --parallel "${paths[@]}"
        ;;
    --check)
        # --strict turns every finding into an error, so a single unformatted line fails.
        if ! swift format lint --strict --recursive --parallel "${paths[@]}"; then
            echo "format: the files above are not formatted; run tools/format.sh and commit the result" >&2
            exit 1
        fi
        ;;
    *)
        echo "format: unknown option '$1'; use no option to rewrite the files, or --check to only check them" >&2
        exit 64
        ;;
esac
