#!/usr/bin/env python3
# make_upload.py STORE DEVICE AFTER_SEQ [MAX]  ->  an upload body on stdout
# Joins `onboard export` (the events) with `mdb_dump -s events` (each record's prev and hash).
import hashlib, json, os, subprocess, sys

store, device, after = sys.argv[1], sys.argv[2], int(sys.argv[3])
limit = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
lines = subprocess.run([os.environ.get("ONBOARD", "onboard"), "export", "--store", store],
                       capture_output=True, text=True, check=True).stdout.splitlines()
dump = subprocess.run(["mdb_dump", "-s", "events", store],
                      capture_output=True, text=True, check=True).stdout.splitlines()
dump = dump[dump.index("HEADER=END") + 1:dump.index("DATA=END")]
values = {int(k, 16): bytes.fromhex(v.strip()) for k, v in zip(dump[0::2], dump[1::2])}

records = []
for line in lines:
    event = json.loads(line)
    seq = event["seq"]
    if seq <= after or len(records) == limit:
        continue
    value = values[seq]                       # format byte ‖ hash ‖ prev ‖ body
    hash_, prev = value[1:33], value[33:65]
    assert hashlib.blake2b(value[33:], digest_size=32).digest() == hash_   # hash = BLAKE2b-256(prev ‖ body)
    records.append({"event": event, "prev": prev.hex(), "hash": hash_.hex()})
json.dump({"device": device, "records": records}, sys.stdout, separators=(",", ":"), ensure_ascii=False)
