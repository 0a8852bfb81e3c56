#!/usr/bin/env python3
# make_upload.py STORE DEVICE AFTER_SEQ [MAX]  ->  an upload body on stdout
# Joins `onboard export` (the events) with `mdb_dump -s events` (each record's prev and hash) and
# the user entries in `mdb_dump -s user_keys` and the pseudonym key in `mdb_dump -s meta` (the keys the
# server's replica needs: docs/sync-protocol.md § Keys).
import hashlib, json, os, subprocess, sys

store, device, after = sys.argv[1], sys.argv[2], int(sys.argv[3])
limit = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
lines = subprocess.run([os.environ.get("ONBOARD", "onboard"), "export", "--store", store],
                       capture_output=True, text=True, check=True).stdout.splitlines()

def dump(database):
    out = subprocess.run(["mdb_dump", "-s", database, store], capture_output=True, text=True, check=True).stdout.splitlines()
    out = out[out.index("HEADER=END") + 1:out.index("DATA=END")]
    return {bytes.fromhex(k.strip()): bytes.fromhex(v.strip()) for k, v in zip(out[0::2], out[1::2])}

values = {int.from_bytes(k, "big"): v for k, v in dump("events").items()}
# A user's entry: user number -> pseudonym (16) ‖ key (32) ‖ sealed id, or the pseudonym alone once forgotten.
entries = {v[:16]: v[16:] for v in dump("user_keys").values()}

records, refs, sealed = [], set(), {}
for line in lines:
    event = json.loads(line)
    seq = event["seq"]
    if seq <= after or len(records) == limit:
        continue
    value = values[seq]                       # format byte ‖ hash ‖ prev ‖ body
    hash_, prev = value[1:33], value[33:65]
    assert hashlib.blake2b(value[33:], digest_size=32).digest() == hash_   # hash = BLAKE2b-256(prev ‖ body)
    body = value[65:]
    user_at = 2 + 1 + 8 + 16 + 8 + 1 + body[35]   # type, schema, seq, id, at, device length, device
    if body[user_at] == 1:                        # user present: its 16-byte pseudonym follows
        refs.add(body[user_at + 1:user_at + 17])
        at = user_at + 17
        at += 17 if body[at] == 1 else 1          # session presence (and session)
        # user_added (1) / user_profile_updated (2) sealed before the user was forgotten: the
        # event reads erased, so the server needs the sealed section as it is (§ Keys).
        if int.from_bytes(body[0:2], "big") in (1, 2) and event["user"].startswith("~") and body[at] == 1:
            length = int.from_bytes(body[at + 1:at + 3], "big")
            sealed[str(seq)] = body[at + 3:at + 3 + length].hex()
    records.append({"event": event, "prev": prev.hex(), "hash": hash_.hex()})
users = {ref.hex(): entries[ref][:32].hex() for ref in sorted(refs) if len(entries.get(ref, b"")) > 32}
keys = {"pseudonym_key": dump("meta")[b"pseudonym_key"].hex(), "users": users}
if sealed:
    keys["sealed"] = sealed
json.dump({"device": device, "records": records, "keys": keys}, sys.stdout, separators=(",", ":"), ensure_ascii=False)
