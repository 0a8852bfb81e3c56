#!/usr/bin/env bash
# The curl walkthrough of docs/sync-protocol.md as a script: a client that knows only the
# protocol document (curl, python3, mdb_dump) enrols, uploads, re-uploads and reads back.
# Usage: tools/curl_walkthrough.sh WORKDIR   (ONBOARD=path/to/onboard; default: onboard on PATH)
set -euo pipefail
work=$1
onboard=${ONBOARD:-onboard}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
cd "$work"

"$onboard" serve --port 0 --data server > serve.out 2> serve.err &
server_pid=$!
trap 'kill -TERM $server_pid 2>/dev/null; wait $server_pid 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do grep -q "listening on" serve.out 2>/dev/null && break; sleep 0.05; done
S=$(sed -n 's/^onboard serve: listening on \(http:\/\/[0-9.:]*\),.*/\1/p' serve.out)
ADMIN=$(cat server/admin.token)

echo "health: $(curl -s "$S/v1/health")"
TOKEN=$(curl -s -X POST -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
        -d '{"device":"kiosk-7"}' "$S/v1/devices" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')

"$onboard" record --store kiosk.lmdb --device kiosk-7 '{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","at":"2026-11-29T16:00:00.123Z","user":"alice","session":"7c9e6679-7425-40de-944b-e07fc1f90ae7","type":"sign_in_failed","method":"passcode","reason":"invalid_passcode"}' > /dev/null
"$onboard" record --store kiosk.lmdb '{"id":"3f2b8c4e-1a6d-4e2f-9b7a-5c8d9e0f1a2b","at":"2026-11-29T16:00:09.456Z","user":"alice","session":"7c9e6679-7425-40de-944b-e07fc1f90ae7","type":"sign_in_succeeded","method":"passcode","second_factor":false}' > /dev/null

echo "cursor: $(curl -s -H "Authorization: Bearer $TOKEN" "$S/v1/devices/kiosk-7/cursor")"
ONBOARD=$onboard python3 "$here/make_upload.py" kiosk.lmdb kiosk-7 0 > batch.json
echo "upload: $(curl -s -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' --data-binary @batch.json "$S/v1/devices/kiosk-7/events")"
echo "again: $(curl -s -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' --data-binary @batch.json "$S/v1/devices/kiosk-7/events")"
for second in 01 02 03; do
    "$onboard" record --store kiosk.lmdb "{\"type\":\"sign_in_failed\",\"user\":\"bob\",\"at\":\"2026-11-29T16:01:$second.000Z\",\"method\":\"password\",\"reason\":\"invalid_password\"}" > /dev/null
done
ONBOARD=$onboard python3 "$here/make_upload.py" kiosk.lmdb kiosk-7 3 > gap.json
echo "gap: $(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' --data-binary @gap.json "$S/v1/devices/kiosk-7/events")"
ONBOARD=$onboard python3 "$here/make_upload.py" kiosk.lmdb kiosk-7 2 > rest.json
echo "rest: $(curl -s -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' --data-binary @rest.json "$S/v1/devices/kiosk-7/events")"
AUDITOR=$(curl -s -X POST -H "Authorization: Bearer $ADMIN" "$S/v1/auditors" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
echo "history: $(curl -s -H "Authorization: Bearer $AUDITOR" "$S/v1/users/alice/history")"
echo "lockout: $(curl -s -H "Authorization: Bearer $AUDITOR" "$S/v1/users/bob/lockout?at=2026-11-29T16:01:30.000Z")"
