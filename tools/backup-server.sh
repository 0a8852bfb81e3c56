#!/usr/bin/env bash
# Backs up the data directory of an LMDB-backed `onboard serve` while it runs
# (docs/operations.md § Backups):
#
#   tools/backup-server.sh --data /var/lib/onboard --to /backup/onboard-2026-12-02
#
# Every LMDB environment (the tokens in server/, the server actions in actions/, each device's
# replica in devices/) is copied with mdb_copy -c: a consistent, compacted snapshot of that
# environment, taken in one read transaction, which never blocks the server's writers. The
# server's key files (server/signing.key, log.key) and admin.token are copied with their modes.
# The copy is then checked with `onboard audit` (every replica's chain and signed heads) unless
# --no-verify is given. Environments are copied one after another, so a device enrolled or an
# upload made during the backup may be in one copy and not another; every such state is one the
# server reads correctly (a replica without a token, a token without a replica), and devices
# resend whatever a restored server lacks.
#
# Exit 64 for bad arguments, 73 when the target exists and is not empty, 74 when a copy fails,
# 1 when the audit of the copy fails. A failed backup removes its partial target.
set -euo pipefail

usage() {
    echo "usage: tools/backup-server.sh --data DIR --to NEW_DIR [--no-verify] [--onboard PATH]" >&2
    exit 64
}

data="" target="" verify=1 onboard="${ONBOARD:-onboard}"
while (($#)); do
    case $1 in
        --data) data=${2-}; shift 2 || usage ;;
        --to) target=${2-}; shift 2 || usage ;;
        --no-verify) verify=0; shift ;;
        --onboard) onboard=${2-}; shift 2 || usage ;;
        *) usage ;;
    esac
done
[[ -n $data && -n $target ]] || usage
if [[ ! -f $data/server/data.mdb ]]; then
    echo "backup: $data holds no sync server (no server/data.mdb); pass the --data of onboard serve" >&2
    exit 64
fi
command -v mdb_copy >/dev/null || { echo "backup: mdb_copy is missing; install lmdb-utils (tools/setup.sh does)" >&2; exit 69; }
if [[ -e $target ]] && [[ -n $(ls -A "$target" 2>/dev/null) ]]; then
    echo "backup: $target exists and is not empty; back up into a new directory" >&2
    exit 73
fi

umask 077
mkdir -p "$target"
done_ok=0
trap '[[ $done_ok == 1 ]] || { rm -rf "$target"; echo "backup: failed; removed the partial $target" >&2; }' EXIT

copy_environment() {
    mkdir -p "$target/$1"
    if ! mdb_copy -c "$data/$1" "$target/$1" 2>"$target/.mdb_copy.err"; then
        echo "backup: mdb_copy of $data/$1 failed: $(tr '\n' ' ' <"$target/.mdb_copy.err")" >&2
        exit 74
    fi
}

copy_environment server
copy_environment actions
devices=()
if [[ -d $data/devices ]]; then
    for replica in "$data"/devices/*/; do
        [[ -f $replica/data.mdb ]] && devices+=("$(basename "$replica")")
    done
fi
count=${#devices[@]} index=0
for device in "${devices[@]}"; do
    copy_environment "devices/$device"
    index=$((index + 1))
    if ((index % 100 == 0 || index == count)); then echo "backup: $index/$count device replicas copied" >&2; fi
done
rm -f "$target/.mdb_copy.err"
for file in server/signing.key log.key admin.token; do
    if [[ -f $data/$file ]]; then cp -p "$data/$file" "$target/$file" || exit 74; fi
done

if ((verify)); then
    if ! "$onboard" audit --data "$target" >"$target/.audit" 2>&1; then
        echo "backup: the copy does not audit clean:" >&2
        cat "$target/.audit" >&2
        rm -f "$target/.audit"
        exit 1
    fi
    rm -f "$target/.audit"
    echo "backup: the copy audits clean (onboard audit --data $target)" >&2
fi
done_ok=1
echo "backup: $data copied to $target ($count device replicas)"
