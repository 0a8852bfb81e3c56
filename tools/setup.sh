#!/usr/bin/env bash
# Installs what OnboardingStore needs to build and test on Debian/Ubuntu. Idempotent; run as root
# (or with sudo). Used by both README commands and by .ci/run.
set -euo pipefail

# libsqlite3-dev: the SQLite baseline of onboard-bench (Benchmarks/CSQLite). python3-venv: the
# environment of the Python test tools below. libpq-dev: the sync server's PostgreSQL client
# (Sources/CLibPQ); postgresql: the server its tests run against (tools/pg-test-cluster.sh).
# chromium, chromium-driver, python3-selenium: the audit console's real-browser test
# (tools/console_browser.py, run by Tests/OnboardCLITests/ConsoleBrowserTests.swift) and the lab
# report's (tools/lab_report_browser.py: LabReportBrowserTests.swift, tools/lab-screenshot.sh).
# libgnutls28-dev: TLS for onboard serve and onboard sync (Sources/CTLS); openssl: the tests make
# their certificates with it. python3-prometheus-client: the parser the metrics test reads
# GET /metrics with (Tests/OnboardingServerTests/MetricsEndpointTests.swift). nginx and systemd
# (for systemd-analyze): the checks of the deployment files in deploy/
# (Tests/OnboardCLITests/DeploymentTests.swift); the tests run their own nginx, so the package's
# service is kept from starting at install (policy-rc.d), and nothing listens on port 80.
packages=(liblmdb-dev lmdb-utils libsodium-dev libmicrohttpd-dev libgnutls28-dev libsqlite3-dev libpq-dev postgresql pkg-config python3
          python3-venv curl openssl chromium chromium-driver python3-selenium python3-prometheus-client nginx systemd)

if [[ $(id -u) -ne 0 ]]; then
    sudo=sudo
else
    sudo=
fi

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    $sudo apt-get update -qq
    # Debian starts a daemon's service as its package is installed unless policy-rc.d says no;
    # say no for this install only, when the machine has no policy of its own.
    policy=
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
        $sudo chmod 0755 "$policy"
    fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    if [[ -n $policy ]]; then $sudo rm -f "$policy"; fi
fi

# Python test tools from PyPI, pinned with their dependencies in tools/test-requirements.txt, in a
# virtual environment of their own (Debian's python3 refuses system-wide pip installs): the
# official OCSF 1.8.0 schema and the JSON Schema validator that tools/validate_ocsf.py applies to
# `onboard export --format ocsf`, and schemathesis, which checks docs/openapi.yaml against
# `onboard serve`. The tests run this environment's programs (Tests/OnboardCLITests/OCSFValidator.swift,
# OpenAPISchemathesisTests.swift); the list is copied in last, so an interrupted install is redone
# on the next run.
venv=/opt/onboardingstore/venv
requirements="$(dirname "${BASH_SOURCE[0]}")/test-requirements.txt"
if ! cmp -s "$requirements" "$venv/installed.txt"; then
    echo "setup: installing $requirements into $venv" >&2
    $sudo /usr/bin/python3 -m venv --clear "$venv"
    $sudo "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check --no-input --only-binary=:all: \
        --no-deps -r "$requirements"
    $sudo cp "$requirements" "$venv/installed.txt"
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
