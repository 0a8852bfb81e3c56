#!/usr/bin/env python3
"""Reference decoder for an OnboardingStore event log, written from docs/format.md alone.

It reads the `events` sub-database through `mdb_dump` (package lmdb-utils), checks every
record (format byte, BLAKE2b-256 hash, link to the previous record, seq), decodes the body
and prints each event as one canonical JSON line, byte for byte what `onboard export` writes.

Format 2 records name the user by a 16-byte pseudonym and seal the personal text fields with
the user's key (docs/format.md, "Format 2"). The decoder reads the user entries in `user_keys`
too: for a live user
it opens the sealed readable id and fields (XSalsa20-Poly1305, implemented below in pure Python)
and prints them as `onboard export` does; for a forgotten user (an empty tombstone, the key
destroyed) it prints the pseudonym literal ("~" and 32 hex digits), `display_name` as
"[erased]" and the optional text fields as absent. Format 1 records are read as before.

    python3 tools/decode_mdb_dump.py STORE_DIR
    python3 tools/decode_mdb_dump.py --dump-file events.dump

With STORE_DIR it runs `mdb_dump -s events STORE_DIR` (and `-s meta` to check the head).
With --dump-file it reads saved `mdb_dump` output in the default hex format (not `-p`): either
`mdb_dump -s events DIR`, or `mdb_dump -a DIR`, whose `meta` section is then checked too.

Exit status: 0 when the whole log verified and was printed, 1 when a record is damaged (the
message names its seq), 2 on a usage or mdb_dump problem. Nothing is printed unless the whole
log verifies. Only the Python 3 standard library is used.
"""

import hashlib
import hmac
import subprocess
import sys
import uuid
from datetime import datetime, timedelta

# --- the vocabulary (docs/format.md, "Event types" and "Choice codes") -------------------------

# Choice enums: JSON names in code order (the code is the position, from 0).
PASSCODE_POLICY = ["numeric", "alphanumeric"]
USER_REMOVAL_REASON = ["user_request", "admin", "passcode_retry_limit"]
BIOMETRIC_KIND = ["face", "touch", "fingerprint"]
SIGN_IN_METHOD = ["password", "passcode", "biometric", "apple", "google", "other"]
SIGN_IN_FAILURE_REASON = ["invalid_password", "invalid_passcode", "unknown_user", "biometric_failed",
                          "network_unavailable", "server_error", "cancelled"]
SECOND_FACTOR_METHOD = ["totp", "sms", "email", "recovery_code"]
SIGN_OUT_REASON = ["user", "session_expired", "revoked"]
CAPTCHA_PURPOSE = ["sign_in", "create_account"]
RESET_ROUTE = ["username", "email"]
FORM_FIELD = ["username", "password", "password_confirmation", "email", "captcha",
              "phone", "passcode", "second_factor_code"]  # 5-7: schema 2
VALIDATION_RESULT = ["passwords_match", "passwords_do_not_match", "username_available",
                     "username_in_use", "username_invalid", "password_too_weak",
                     "email_available", "email_in_use", "email_invalid", "phone_invalid"]  # 6-9: schema 2
ACCOUNT_CREATION_FAILURE_REASON = ["username_in_use", "username_invalid", "password_too_weak",
                                   "passwords_do_not_match", "captcha_failed", "network_unavailable",
                                   "server_error", "email_in_use", "email_invalid", "phone_invalid"]  # 7-9: schema 2
LOCKOUT_CLEAR_REASON = ["admin", "password_reset", "passcode_reset"]
IDENTIFIER_KIND = ["username", "email", "phone"]
PASSWORD_RESET_FAILURE_REASON = ["unknown_account", "network_unavailable", "server_error", "rate_limited"]


def text(name, optional=False):
    return (name, "text", None, optional)


def choice(name, names, optional=False):
    return (name, "choice", names, optional)


def flag(name, optional=False):
    return (name, "flag", None, optional)


def instant(name):
    return (name, "instant", None, False)


def count(name, low, high):
    return (name, "count", (low, high), False)


# (JSON name, payload fields) in type-code order: the type code is the index + 1.
EVENT_TYPES = [
    ("user_added", [text("display_name"), text("subtitle", True), text("image_ref", True),
                    choice("passcode_policy", PASSCODE_POLICY), count("passcode_min_length", 1, 64)]),
    ("user_profile_updated", [text("display_name", True), text("subtitle", True), text("image_ref", True)]),
    ("user_selected", []),
    ("user_removed", [choice("reason", USER_REMOVAL_REASON)]),
    ("passcode_set", []),
    ("passcode_changed", []),
    ("passcode_reset_started", []),
    ("passcode_reset_completed", []),
    ("biometric_enabled", [choice("kind", BIOMETRIC_KIND)]),
    ("biometric_disabled", []),
    ("sign_in_started", [[choice("method", SIGN_IN_METHOD)],
                         [choice("method", SIGN_IN_METHOD), choice("identifier_kind", IDENTIFIER_KIND, True)]]),
    ("sign_in_failed", [choice("method", SIGN_IN_METHOD), choice("reason", SIGN_IN_FAILURE_REASON)]),
    ("sign_in_throttled", [choice("method", SIGN_IN_METHOD), instant("retry_after")]),
    ("second_factor_required", [choice("method", SECOND_FACTOR_METHOD)]),
    ("second_factor_failed", [choice("method", SECOND_FACTOR_METHOD)]),
    ("second_factor_succeeded", [choice("method", SECOND_FACTOR_METHOD)]),
    ("sign_in_succeeded", [choice("method", SIGN_IN_METHOD), flag("second_factor")]),
    ("signed_out", [choice("reason", SIGN_OUT_REASON)]),
    ("captcha_presented", [choice("purpose", CAPTCHA_PURPOSE)]),
    ("captcha_failed", []),
    ("captcha_passed", []),
    ("captcha_alternatives_viewed", []),
    ("password_reset_requested", [choice("route", RESET_ROUTE)]),
    ("temporary_password_sent", []),
    ("password_changed", [flag("forced")]),
    ("account_creation_started", []),
    ("field_validated", [[choice("field", FORM_FIELD[:5]), choice("result", VALIDATION_RESULT[:6])],
                         [choice("field", FORM_FIELD), choice("result", VALIDATION_RESULT)]]),
    ("account_creation_failed", [[choice("field", FORM_FIELD[:5], True),
                                  choice("reason", ACCOUNT_CREATION_FAILURE_REASON[:7])],
                                 [choice("field", FORM_FIELD, True),
                                  choice("reason", ACCOUNT_CREATION_FAILURE_REASON)]]),
    ("account_created", []),
    ("lockout_cleared", [choice("reason", LOCKOUT_CLEAR_REASON)]),
    ("user_forgotten", []),
    ("field_edited", [choice("field", FORM_FIELD), flag("filled"), flag("valid", True)]),
    ("account_creation_submitted", []),
    ("password_reset_started", []),
    ("password_reset_failed", [choice("reason", PASSWORD_RESET_FAILURE_REASON)]),
]
# A type with several schemas lists them oldest first (docs/format.md, "Schema versions"); the
# others have one field list, schema 1.
EVENT_TYPES = [(name, fields if fields and isinstance(fields[0], list) else [fields]) for name, fields in EVENT_TYPES]


def holds(fields, payload):
    """Whether schema `fields` holds the decoded `payload` (a list of (name, kind, value))."""
    names = {name: extra for name, kind, extra, optional in fields}
    for name, kind, value_ in payload:
        if name not in names:
            return False
        if kind == "choice" and value_ not in names[name]:
            return False
    return True

RECORD_FORMAT = 2         # pseudonymous records with sealed personal fields
LEGACY_RECORD_FORMAT = 1  # readable user ids, personal fields in the clear (read too)
STORE_FORMAT = 2
USER_REF_BYTES = 16
KEY_BYTES = 32
ERASED_TEXT = "[erased]"
HEADER = 65  # format byte, hash, previous hash
ZERO_HASH = bytes(32)

MAX_DEVICE_BYTES = 64
MAX_USER_BYTES = 256
MAX_TEXT_BYTES = 4096
MIN_MS = -62_135_596_800_000   # 0001-01-01T00:00:00.000Z
MAX_MS = 253_402_300_799_999   # 9999-12-31T23:59:59.999Z
DEVICE_CHARS = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:")


class Damaged(Exception):
    """A record that does not decode or verify."""


# --- crypto_secretbox_open (XSalsa20-Poly1305), pure Python ------------------------------------
# Personal fields and readable user ids are sealed with libsodium's crypto_secretbox_easy:
# nonce (24) ‖ Poly1305 tag (16) ‖ XSalsa20 ciphertext. Small values only, so speed is no concern.

_MASK32 = 0xFFFFFFFF
_SIGMA = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]  # "expand 32-byte k"


def _rotl(v, n):
    return ((v << n) & _MASK32) | (v >> (32 - n))


def _salsa20_rounds(state):
    x = list(state)
    for _ in range(10):
        for a, b, c, d in ((0, 4, 8, 12), (5, 9, 13, 1), (10, 14, 2, 6), (15, 3, 7, 11),
                           (0, 1, 2, 3), (5, 6, 7, 4), (10, 11, 8, 9), (15, 12, 13, 14)):
            x[b] ^= _rotl((x[a] + x[d]) & _MASK32, 7)
            x[c] ^= _rotl((x[b] + x[a]) & _MASK32, 9)
            x[d] ^= _rotl((x[c] + x[b]) & _MASK32, 13)
            x[a] ^= _rotl((x[d] + x[c]) & _MASK32, 18)
    return x


def _words(data):
    return [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]


def _state(key, sixteen):
    k, n = _words(key), _words(sixteen)
    return [_SIGMA[0], k[0], k[1], k[2], k[3], _SIGMA[1], n[0], n[1], n[2], n[3],
            _SIGMA[2], k[4], k[5], k[6], k[7], _SIGMA[3]]


def _xsalsa20_stream(key, nonce, length):
    x = _salsa20_rounds(_state(key, nonce[:16]))  # HSalsa20: no feed-forward
    subkey = b"".join(x[i].to_bytes(4, "little") for i in (0, 5, 10, 15, 6, 7, 8, 9))
    out = bytearray()
    counter = 0
    while len(out) < length:
        state = _state(subkey, nonce[16:24] + counter.to_bytes(8, "little"))
        block = _salsa20_rounds(state)
        out += b"".join(((block[i] + state[i]) & _MASK32).to_bytes(4, "little") for i in range(16))
        counter += 1
    return bytes(out[:length])


def _poly1305(key, message):
    r = int.from_bytes(key[:16], "little") & 0x0FFFFFFC0FFFFFFC0FFFFFFC0FFFFFFF
    s = int.from_bytes(key[16:32], "little")
    p = (1 << 130) - 5
    acc = 0
    for i in range(0, len(message), 16):
        acc = (acc + int.from_bytes(message[i:i + 16] + b"\x01", "little")) * r % p
    return ((acc + s) & ((1 << 128) - 1)).to_bytes(16, "little")


def secretbox_open(sealed, key):
    """The plaintext of nonce ‖ crypto_secretbox_easy(…) under the 32-byte key, or None."""
    if len(sealed) < 40:
        return None
    nonce, tag, ciphertext = sealed[:24], sealed[24:40], sealed[40:]
    stream = _xsalsa20_stream(key, nonce, 32 + len(ciphertext))
    if not hmac.compare_digest(_poly1305(stream[:32], ciphertext), tag):
        return None
    return bytes(c ^ s for c, s in zip(ciphertext, stream[32:]))


# --- the users (user_keys) ---------------------------------------------------------------------


def load_users(pairs):
    """{pseudonym (16 bytes): (readable id, key)} of the live users in `user_keys`: each value is
    pseudonym (16) ‖ key (32) ‖ nonce ‖ sealed readable id, or the pseudonym alone once the user
    was forgotten (left out, so its records read as the pseudonym literal with personal fields
    erased)."""
    users = {}
    for _, value in pairs:
        if len(value) < USER_REF_BYTES:
            raise Damaged("a user_keys entry is %d bytes, too short to name a user" % len(value))
        ref = value[:USER_REF_BYTES]
        if len(value) == USER_REF_BYTES:
            continue  # a tombstone: the user was forgotten
        user_key = value[USER_REF_BYTES:USER_REF_BYTES + KEY_BYTES]
        name = secretbox_open(value[USER_REF_BYTES + KEY_BYTES:], user_key)
        if name is None:
            raise Damaged("the user_keys entry of ~%s does not open with its key" % ref.hex())
        try:
            users[ref] = (name.decode("utf-8"), user_key)
        except UnicodeDecodeError:
            raise Damaged("the readable id of ~%s is not valid UTF-8" % ref.hex())
    return users


# --- reading mdb_dump output -----------------------------------------------------------------


def parse_dump(lines):
    """Sections of `mdb_dump` hex output: {database name or "": [(key bytes, value bytes)]}."""
    sections = {}
    it = iter(lines)
    for line in it:
        line = line.rstrip("\n")
        if not line.startswith("VERSION="):
            if line.strip():
                raise ValueError("expected VERSION= at the start of a dump section, got %r" % line[:40])
            continue
        header = {}
        for line in it:
            line = line.rstrip("\n")
            if line == "HEADER=END":
                break
            name, _, value = line.partition("=")
            header[name] = value
        else:
            raise ValueError("dump ends inside a header")
        if header.get("format") != "bytevalue":
            raise ValueError("dump is in format %r; run mdb_dump without -p" % header.get("format"))
        pairs = []
        pending_key = None
        for line in it:
            line = line.rstrip("\n")
            if line == "DATA=END":
                break
            if not line.startswith(" "):
                raise ValueError("unexpected line in dump data: %r" % line[:40])
            data = bytes.fromhex(line[1:])
            if pending_key is None:
                pending_key = data
            else:
                pairs.append((pending_key, data))
                pending_key = None
        else:
            raise ValueError("dump ends before DATA=END")
        if pending_key is not None:
            raise ValueError("dump has a key without a value")
        sections[header.get("database", "")] = pairs
    return sections


def run_mdb_dump(store, database, optional=False):
    if optional:  # user_keys is absent from a format 1 store
        listing = subprocess.run(["mdb_dump", "-l", store], capture_output=True, text=True)
        if listing.returncode == 0 and database not in listing.stdout.split():
            return []
    try:
        result = subprocess.run(["mdb_dump", "-s", database, store], capture_output=True, text=True)
    except FileNotFoundError:
        sys.exit("mdb_dump not found; install lmdb-utils (apt-get install lmdb-utils)")
    if result.returncode != 0:
        print("mdb_dump -s %s %s failed: %s" % (database, store, result.stderr.strip()), file=sys.stderr)
        sys.exit(2)
    return parse_dump(result.stdout.splitlines()).get(database, [])


# --- decoding one record ---------------------------------------------------------------------


class Reader:
    def __init__(self, data):
        self.data = data
        self.offset = 0

    def take(self, n, what):
        if self.offset + n > len(self.data):
            raise Damaged("truncated in %s (needs %d bytes, %d left)" % (what, n, len(self.data) - self.offset))
        piece = self.data[self.offset:self.offset + n]
        self.offset += n
        return piece

    def uint(self, n, what):
        return int.from_bytes(self.take(n, what), "big")

    def int64(self, what):
        return int.from_bytes(self.take(8, what), "big", signed=True)

    def presence(self, what):
        byte = self.uint(1, what)
        if byte > 1:
            raise Damaged("presence byte of %s is %d, expected 0 or 1" % (what, byte))
        return byte == 1

    def utf8(self, n, what):
        try:
            return self.take(n, what).decode("utf-8")
        except UnicodeDecodeError:
            raise Damaged("%s is not valid UTF-8" % what)

    def short_string(self, what):
        return self.utf8(self.uint(2, what), what)

    def uuid(self, what):
        return str(uuid.UUID(bytes=self.take(16, what)))


def has_control(s):
    return any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in s)


def check_instant(ms, what):
    if not MIN_MS <= ms <= MAX_MS:
        raise Damaged("%s %d ms lies outside years 0001-9999" % (what, ms))


def check_text(value, type_name, name):
    if not 1 <= len(value.encode()) <= MAX_TEXT_BYTES or has_control(value):
        raise Damaged("%s.%s breaks the text rules" % (type_name, name))
    return value


def event_seq(value):
    return int.from_bytes(value[HEADER + 3:HEADER + 11], "big")


def decode_record(value, users):
    """(seq, hash, previous hash, event) of one `events` value; raises Damaged. `users` maps a
    pseudonym to (readable id, key) for the users that are not forgotten."""
    if len(value) <= HEADER:
        raise Damaged("record is %d bytes, shorter than its %d-byte header" % (len(value), HEADER))
    version = value[0]
    if version not in (RECORD_FORMAT, LEGACY_RECORD_FORMAT):
        raise Damaged("record format version %d is not supported (this decoder reads %d and %d)"
                      % (version, LEGACY_RECORD_FORMAT, RECORD_FORMAT))
    stored = value[1:33]
    if hashlib.blake2b(value[33:], digest_size=32).digest() != stored:
        raise Damaged("hash does not match the record's bytes (the record was modified)")
    previous = value[33:65]
    r = Reader(value[HEADER:])

    code = r.uint(2, "type code")
    if not 1 <= code <= len(EVENT_TYPES):
        raise Damaged("unknown event type code %d" % code)
    type_name, schemas = EVENT_TYPES[code - 1]
    schema = r.uint(1, "schema version")
    if not 1 <= schema <= len(schemas):
        raise Damaged("%s schema version %d is not supported (this decoder reads 1...%d)" % (type_name, schema, len(schemas)))
    fields = schemas[schema - 1]
    seq = r.uint(8, "seq")
    event = {"id": r.uuid("id")}
    at = r.int64("at")
    check_instant(at, "at")
    device = r.utf8(r.uint(1, "device length"), "device")
    if not 1 <= len(device.encode()) <= MAX_DEVICE_BYTES or any(b not in DEVICE_CHARS for b in device.encode()):
        raise Damaged("device %r breaks the device id rules" % device)
    ref = None
    user_key = None
    if version == LEGACY_RECORD_FORMAT:
        user = r.short_string("user") if r.presence("user") else None
        if user is not None and (not 1 <= len(user.encode()) <= MAX_USER_BYTES or has_control(user)):
            raise Damaged("user %r breaks the user id rules" % user)
    elif r.presence("user"):
        # Format 2: the user's pseudonym; the readable id comes from its user_keys entry while the user
        # has a key, otherwise the user reads as the pseudonym literal ("~" and 32 hex digits).
        ref = r.take(USER_REF_BYTES, "user")
        user, user_key = users.get(ref, ("~" + ref.hex(), None))
    else:
        user = None
    session = r.uuid("session") if r.presence("session") else None
    event.update(device=device, at=at, user=user, session=session, type=type_name)

    # Format 2, with a user: the text fields (display_name, subtitle, image_ref) are one sealed
    # section after the session (presence byte, u16 length, nonce ‖ tag ‖ ciphertext), or absent
    # when written for a forgotten user; the other fields follow in the clear.
    sealed_fields = ref is not None and any(kind == "text" for _, kind, _, _ in fields)
    personal = None
    if sealed_fields and r.presence("sealed personal fields"):
        sealed = r.take(r.uint(2, "sealed personal fields"), "sealed personal fields")
        if user_key is not None:
            plaintext = secretbox_open(sealed, user_key)
            if plaintext is None:
                raise Damaged("the sealed personal fields of seq %d do not open with their user's key" % event_seq(value))
            inner = Reader(plaintext)
            personal = {}
            for name, kind, extra, optional in fields:
                if kind != "text" or (optional and not inner.presence(name)):
                    continue
                personal[name] = check_text(inner.short_string(name), type_name, name)
            if inner.offset != len(inner.data):
                raise Damaged("%d unexpected bytes after the sealed personal fields" % (len(inner.data) - inner.offset))

    payload = []
    for name, kind, extra, optional in fields:
        if sealed_fields and kind == "text":
            if personal is None:  # erased: required text reads as "[erased]", optional as absent
                if not optional:
                    payload.append((name, kind, ERASED_TEXT))
            elif name in personal:
                payload.append((name, kind, personal[name]))
            continue
        if optional and not r.presence(name):
            continue
        if kind == "text":
            value_ = check_text(r.short_string(name), type_name, name)
        elif kind == "choice":
            index = r.uint(1, name)
            if index >= len(extra):
                raise Damaged("%s.%s has unknown code %d" % (type_name, name, index))
            value_ = extra[index]
        elif kind == "flag":
            byte = r.uint(1, name)
            if byte > 1:
                raise Damaged("%s.%s flag byte is %d" % (type_name, name, byte))
            value_ = byte == 1
        elif kind == "instant":
            value_ = r.int64(name)
            check_instant(value_, name)
        else:  # count
            value_ = r.uint(4, name)
            if not extra[0] <= value_ <= extra[1]:
                raise Damaged("%s.%s is %d, outside %d...%d" % (type_name, name, value_, extra[0], extra[1]))
        payload.append((name, kind, value_))
    if r.offset != len(r.data):
        raise Damaged("%d unexpected bytes after the payload" % (len(r.data) - r.offset))
    # A record is written at the lowest schema that holds it: one byte form per event.
    if schema > 1 and holds(schemas[schema - 2], payload):
        raise Damaged("%s is written at schema version %d but holds nothing an older schema cannot" % (type_name, schema))
    event["payload"] = payload
    return seq, stored, previous, event


# --- canonical JSON --------------------------------------------------------------------------

ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def quote(s):
    out = ['"']
    for c in s:
        if c in ESCAPES:
            out.append(ESCAPES[c])
        elif ord(c) < 0x20:
            out.append("\\u%04x" % ord(c))
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


EPOCH = datetime(1970, 1, 1)


def iso8601(ms):
    days, ms_of_day = divmod(ms, 86_400_000)
    date = EPOCH + timedelta(days=days)
    hours, rest = divmod(ms_of_day, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (date.year, date.month, date.day, hours, minutes, seconds, millis)


def to_json(seq, event):
    parts = [
        '"id":' + quote(event["id"]),
        '"device":' + quote(event["device"]),
        '"seq":%d' % seq,
        '"at":' + quote(iso8601(event["at"])),
        '"user":' + ("null" if event["user"] is None else quote(event["user"])),
        '"session":' + ("null" if event["session"] is None else quote(event["session"])),
        '"type":' + quote(event["type"]),
    ]
    for name, kind, value in event["payload"]:
        if kind in ("text", "choice"):
            rendered = quote(value)
        elif kind == "flag":
            rendered = "true" if value else "false"
        elif kind == "instant":
            rendered = quote(iso8601(value))
        else:
            rendered = str(value)
        parts.append(quote(name) + ":" + rendered)
    return "{" + ",".join(parts) + "}"


# --- the log ---------------------------------------------------------------------------------


def decode_log(pairs, meta_pairs=None, user_pairs=()):
    """Canonical JSON lines of the whole log; raises Damaged naming the seq."""
    users = load_users(user_pairs)
    lines = []
    previous_hash = ZERO_HASH
    expected_seq = 1
    for key, value in pairs:
        if len(key) != 8:
            raise Damaged("events database has a key of %d bytes (expected 8)" % len(key))
        seq = int.from_bytes(key, "big")
        try:
            if seq != expected_seq:
                raise Damaged("expected seq %d here (records missing or out of order)" % expected_seq)
            body_seq, record_hash, previous, event = decode_record(value, users)
            if body_seq != seq:
                raise Damaged("record says seq %d but is stored at seq %d (records were moved)" % (body_seq, seq))
            if previous != previous_hash:
                raise Damaged("previous-hash link does not match the hash of the record before it (chain broken)")
        except Damaged as error:
            raise Damaged("seq %d: %s" % (seq, error))
        lines.append(to_json(seq, event))
        previous_hash = record_hash
        expected_seq = seq + 1

    if meta_pairs is not None:
        meta = dict(meta_pairs)
        version = meta.get(b"format_version")
        if version is None or len(version) != 4:
            raise Damaged("meta has no 4-byte format_version")
        if int.from_bytes(version, "big") > STORE_FORMAT:
            raise Damaged("store format version %d is newer than this decoder reads (%d)"
                          % (int.from_bytes(version, "big"), STORE_FORMAT))
        head = meta.get(b"head")
        if head is None or len(head) != 40:
            raise Damaged("meta has no 40-byte head")
        head_seq = int.from_bytes(head[:8], "big")
        if head_seq != expected_seq - 1:
            raise Damaged("meta head is seq %d but the last record is seq %d" % (head_seq, expected_seq - 1))
        if head[8:] != previous_hash:
            raise Damaged("seq %d: meta head hash does not match the hash of the last record" % head_seq)
    return lines


def main(argv):
    if len(argv) == 2 and argv[0] == "--dump-file":
        try:
            with open(argv[1], encoding="ascii") as handle:
                sections = parse_dump(handle)
        except (OSError, ValueError) as error:
            print("cannot read %s: %s" % (argv[1], error), file=sys.stderr)
            return 2
        if "events" in sections:
            pairs = sections["events"]
        elif len(sections) == 1:
            pairs = next(iter(sections.values()))
        else:
            print("%s holds no events database" % argv[1], file=sys.stderr)
            return 2
        meta = sections.get("meta")
        user_pairs = sections.get("user_keys", [])
    elif len(argv) == 1 and not argv[0].startswith("-"):
        pairs = run_mdb_dump(argv[0], "events")
        meta = run_mdb_dump(argv[0], "meta")
        user_pairs = run_mdb_dump(argv[0], "user_keys", optional=True)
    else:
        print("usage: decode_mdb_dump.py STORE_DIR | --dump-file FILE", file=sys.stderr)
        return 2
    try:
        lines = decode_log(pairs, meta, user_pairs)
    except Damaged as error:
        print("store is damaged: %s" % error, file=sys.stderr)
        return 1
    out = sys.stdout.buffer
    for line in lines:
        out.write(line.encode("utf-8") + b"\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
