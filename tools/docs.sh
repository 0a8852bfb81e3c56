#!/usr/bin/env bash
# Builds the DocC documentation of the library products and fails on any DocC warning: an
# unresolved ``Symbol`` or <doc:Article> link, a bad topic, an undocumented parameter.
#
#   tools/docs.sh [--output DIR]     default DIR: .build/docs
#
# 1. `swift build -Xswiftc -warnings-as-errors --target OnboardingServer` (which builds
#    OnboardingStore too; a no-op after CI's build, which has the same flags);
# 2. for each catalog, the module's symbol graph with swift-symbolgraph-extract from the built
#    module, with the modules it re-exports: OnboardingStore's has OnboardingModel's and
#    OnboardingProjections' (an app sees their types through `import OnboardingStore`),
#    OnboardingServer's has HTTPServer's. The server's doc comments name the store's types in
#    code voice, not as links: DocC resolves a link only within one archive;
# 3. `docc convert CATALOG --additional-symbol-graph-dir … --analyze --warnings-as-errors`, into
#    DIR/OnboardingStore.doccarchive and DIR/OnboardingServer.doccarchive;
# 4. `docc merge` of the two into DIR/OnboardingStore-combined.doccarchive.
#
# Open an archive with Xcode, or serve it: `python3 -m http.server -d DIR/OnboardingStore.doccarchive`
# and browse /documentation/onboardingstore. No network, no swift-docc-plugin: only the toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

output=.build/docs
if [[ ${1:-} == --output ]]; then
    output=$2
    shift 2
fi
if (($#)); then
    echo "usage: tools/docs.sh [--output DIR]" >&2
    exit 64
fi
started=$SECONDS

swift build -Xswiftc -warnings-as-errors --target OnboardingServer
bin=$(swift build --show-bin-path)
triple=$(swift -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')
# The C modules the Swift modules import (system libraries and CTLS), as SwiftPM finds them.
includes=(-I "$bin/Modules" -I "$bin")
for module in CLMDB CSodium CMicroHTTPD CLibPQ; do
    includes+=(-Xcc "-fmodule-map-file=$PWD/Sources/$module/module.modulemap")
done
includes+=(-I Sources/CTLS/include)
for flag in $(pkg-config --cflags-only-I lmdb libsodium libmicrohttpd libpq 2>/dev/null); do
    includes+=(-Xcc "$flag")
done

rm -rf "$output"
mkdir -p "$output"
log="$output/docc.log"
: > "$log"

# convert MODULE REEXPORTED [DOCC ARGS]: the module's symbol graph, then its archive.
convert() {
    local module=$1 reexported=$2
    shift 2
    local symbols="$output/symbol-graphs/$module"
    mkdir -p "$symbols"
    local extract=(-module-name "$module" -target "$triple" "${includes[@]}" -minimum-access-level public
                   -skip-inherited-docs -output-dir "$symbols")
    [[ -n $reexported ]] && extract+=("-experimental-allowed-reexported-modules=$reexported")
    swift-symbolgraph-extract "${extract[@]}"
    echo "docs: docc convert $module" >&2
    local status=0
    docc convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$symbols" \
        --output-path "$output/$module.doccarchive" --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.onboardingstore.$module" \
        --analyze --warnings-as-errors "$@" 2>&1 | tee -a "$log" || status=$?
    if ((status != 0)) || grep -qE "^(warning|error):" "$log"; then
        echo "docs: DocC found problems in $module's documentation (above; also in $log)" >&2
        exit 1
    fi
}

convert OnboardingStore OnboardingModel,OnboardingProjections
convert OnboardingServer HTTPServer
docc merge "$output/OnboardingStore.doccarchive" "$output/OnboardingServer.doccarchive" \
    --synthesized-landing-page-name OnboardingStore --output-path "$output/OnboardingStore-combined.doccarchive" >> "$log" 2>&1
echo "docs: no DocC warning; archives in $output (OnboardingStore, OnboardingServer, combined) in $((SECONDS - started)) s" >&2
