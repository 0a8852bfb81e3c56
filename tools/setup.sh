#!/usr/bin/env bash
# Installs what OnboardingStore needs to build and test on Debian/Ubuntu. Idempotent; run as root
# (or with sudo). Used by both README commands and by .ci/run.
set -euo pipefail

# libsqlite3-dev: the SQLite baseline of onboard-bench (Benchmarks/CSQLite).
packages=(liblmdb-dev lmdb-utils libsodium-dev libmicrohttpd-dev libsqlite3-dev pkg-config python3 curl)

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        sudo=sudo
    else
        sudo=
    fi
    echo "setup: installing ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
    for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
        [[ -x $candidate/swift ]] && export PATH="$candidate:$PATH"
    done
fi
if ! command -v swift >/dev/null 2>&1; then
    echo "setup: the Swift 6.3 toolchain is not on PATH; install it from https://swift.org/install and rerun" >&2
    exit 69
fi
echo "setup: ok ($(swift --version 2>/dev/null | head -n 1))" >&2
