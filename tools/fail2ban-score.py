#!/usr/bin/env python3
"""Score `onboard import --from sshd` against fail2ban's own annotated sshd test logs.

The logs are fail2ban's (fail2ban/tests/files/logs/sshd and sshd-journal); they are GPL
data, fetched outside this repository (e.g. to /work/fail2ban/) and never copied into it.

How fail2ban's test runner reads these files (fail2ban/tests/samplestestcase.py,
FilterSamplesRegex.testSampleRegexsFactory; this script follows the same rules):

* `# failJSON: {...}` describes the NEXT physical line, which is consumed as the log line
  whatever it is (a failJSON with a comment or blank line after it would test that line; at
  end of file `next()` raises). A non-comment, non-blank line with no failJSON before it is
  tested with `{}`, i.e. it must NOT match. Comment and blank lines are otherwise skipped.
* `# fileOptions: {...}` (sshd-journal: logtype journal) is merged under every later
  filterOptions entry of that file.
* `# filterOptions: [{...}, {...}]` (or a single dict) ends the previous block and starts a
  new one: every following line is tested once per entry, each entry being one filter
  instance (mode normal when no "mode"; ddos, extra, aggressive). Keys `test.*` are not
  filter options: `test.condition` (e.g. "name=='sshd'") is evaluated with the filter's
  name and, when false, the whole block is skipped (it exists for the obsolete multi-line
  test filter zzz-sshd-obsolete-multiline). Before any filterOptions a file is tested in
  mode normal only.
* Filter instances are cached by their options (minus test.*), so the same mode's instance,
  with its multi-line state, runs on through later blocks and into files added with
  `# addFILE: "sshd-journal"` (the sshd file ends with it: the journal file is tested after
  it, same instances). `constraint` in a failJSON is a Python expression over `name` and
  `opts`; when false the line is not tested in that mode.
* A line "matches" when the filter returns a failure that is not F-NOFAIL and has an id
  (host); NOFAIL helper matches (`Connection from`, `Connection closed by`,
  `SSH: Server;Ltype: ... Remote: HOST-port`, `Received disconnect ...: 11:`) are not
  failures. Exactly one failure must come back; then every failJSON key other than time,
  match, desc, constraint is compared with the failure's field (host falls back to the
  failure id; attempts = number of matched lines, users = set of users). "time" is the
  line's time read in the test zone (Europe/Zurich); journal lines have no time of their own
  and are fed as journal entries at TEST_NOW (2005-08-14T10:00:00Z).
* Multi-line: fail2ban's sshd filter has maxlines = 1, and links lines through F-MLFID,
  the line's prefix `HOST sshd[PID]:`. A line without an address (`Disconnecting: Too many
  authentication failures`, `Read from socket failed`, `Unable to negotiate a key exchange
  method`, `kex_exchange_identification: ...`) takes the host cached for that id by an
  earlier line of the same PID (`Connection from HOST`, `SSH: Server;Ltype:...;Remote:
  HOST-port`, or an earlier failure); pam_unix failures stay pending until the connection
  ends (`Connection closed ... [preauth]`, aggressive mode) or another user is tried or
  accepted (F-MLFGAINED/F-MLFFORGET: a success forgets the pending failures of that user).

This script: every annotated line is imported ALONE (one temp store per line, `onboard
import --from sshd --year YEAR --timezone UTC --max-clock-skew none LINEFILE`, then `onboard
export`), and IN CONTEXT: the file's log lines in order as one log (other lines blank, so line
numbers stay fail2ban's), imported as growing prefixes, each into a fresh store. Event ids are
made from line number and bytes, so an id's first prefix is its origin line; an event whose
content changes when a later line arrives (an address filled in from a later line of the same
connection) is attributed to the line that completed it, as fail2ban reports a multi-line
failure on the line that gives the host; such rewrites are counted (re-importing that grown
log into the same store fails: same id, other content). The import does not depend on
fail2ban's mode, so each line is imported once and scored under every mode it is tested in.
Journal lines are given a journalctl short-iso time (TEST_NOW). Lines that make an import
fail are blanked in the in-context log.

Counted: sign_in_failed with a counted reason (docs/lockout.md: invalid_password,
invalid_passcode, unknown_user, biometric_failed), second_factor_failed, sign_in_throttled,
sign_in_aborted, and any other failure-like type (fail/throttl/abort/refus/denied/block/
reject in its name) that carries client_address. Addresses are compared canonically
(ipaddress; ::ffff:a.b.c.d is a.b.c.d; fail2ban's 192.030.0.6 is read as 192.30.0.6).
Lines whose fail2ban host is a host name are counted apart.

Usage: python3 tools/fail2ban-score.py --onboard .build/debug/onboard \
           --log /work/fail2ban/sshd --log /work/fail2ban/sshd-journal [--json]
Stdlib only.
"""

import argparse
import concurrent.futures
import datetime
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TEST_NOW = datetime.datetime(2005, 8, 14, 10, 0, 0, tzinfo=datetime.timezone.utc)
JOURNAL_PREFIX = "2005-08-14T10:00:00+0000 "
MODES = ("normal", "ddos", "extra", "aggressive")
COUNTED_REASONS = {"invalid_password", "invalid_passcode", "unknown_user", "biometric_failed"}
ALWAYS_COUNTED = {"second_factor_failed", "sign_in_throttled", "sign_in_aborted"}
FAILURE_WORDS = ("fail", "throttl", "abort", "refus", "denied", "block", "reject")
DIRECTIVE = re.compile(r"^#+ ?(failJSON|(?:file|filter)Options|addFILE):(.+)$")
PID = re.compile(r"\bsshd \d+ - (?:-|\[.*?\]) |\[sshd\]:? |\bsshd(?:-session|-auth)?(?:\[(\d+)\])?:? ")
HEXISH = re.compile(r"[0-9A-Fa-f:.]*[0-9A-Fa-f][0-9A-Fa-f:.]*")


# ---------------------------------------------------------------- fail2ban's file

def safe_eval(expr, name, opts):
    return bool(eval(expr, {"__builtins__": {}}, {"name": name, "opts": opts}))  # noqa: S307 (fail2ban's own constraint strings)


def parse_fail2ban(path, force_journal=False, filter_name="sshd"):
    """Entries (one per tested log line) following samplestestcase.py's reading rules."""
    with open(path, encoding="utf-8", newline="") as f:
        raw = f.read()
    lines = raw.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    entries, notes = [], []
    common, filter_tests, ignore_block = {}, None, False
    block = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        lineno = i + 1
        i += 1
        m = DIRECTIVE.match(line)
        if m:
            kind = m.group(1)
            try:
                data = json.loads(m.group(2))
            except ValueError as e:
                notes.append("line %d: unreadable %s (%s)" % (lineno, kind, e))
                continue
            if kind == "fileOptions":
                common = data
                continue
            if kind == "filterOptions":
                block += 1
                filter_tests, ignore_block = [], False
                for opts in (data if isinstance(data, list) else [data]):
                    merged = dict(common)
                    merged.update(opts)
                    if merged.get("test.condition"):
                        ignore_block = not safe_eval(merged["test.condition"], filter_name, merged)
                    if not ignore_block:
                        filter_tests.append(merged)
                continue
            if kind == "addFILE":
                notes.append("line %d: addFILE %s (fail2ban tests that file next with the same filter instances; pass it with another --log)" % (lineno, json.dumps(data)))
                continue
            faildata = data
            if i >= len(lines):
                notes.append("line %d: failJSON at end of file (fail2ban's next() would raise)" % lineno)
                break
            line = lines[i]
            lineno = i + 1
            i += 1
        elif ignore_block or line.startswith("#") or not line.strip():
            continue
        else:
            faildata = {}
        if ignore_block:
            continue
        tests = filter_tests if filter_tests else [dict(common)]
        modes = []
        for opts in tests:
            if faildata.get("constraint") and not safe_eval(faildata["constraint"], filter_name, opts):
                continue
            modes.append(opts.get("mode", "normal"))
        logtype = (tests[0].get("logtype") if tests else None) or common.get("logtype")
        journal = force_journal or logtype == "journal"
        entries.append({
            "lineno": lineno, "line": line, "faildata": faildata, "modes": modes,
            "block": block, "logtype": logtype or "file", "journal": journal,
            "input": (JOURNAL_PREFIX + line) if journal else line,
        })
    return entries, notes, len(lines)


def canon(host):
    """Canonical address text, or None for a host name."""
    if host is None:
        return None
    h = host.strip().strip("[]")
    try:
        ip = ipaddress.ip_address(h)
    except ValueError:
        if re.fullmatch(r"\d{1,3}(?:\.\d{1,3}){3}", h) and all(int(p) <= 255 for p in h.split(".")):
            ip = ipaddress.ip_address(".".join(str(int(p)) for p in h.split(".")))
        else:
            return None
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return str(ip)


def expected_host(fd):
    for k in ("host", "ip4", "ip6"):
        if k in fd:
            return fd[k]
    return None


def line_pid(line):
    m = PID.search(line)
    return m.group(1) if m else None


def address_token(tok):
    """Canonical address of a token of hex digits, dots and colons (trailing ':'/'.' cut), or None."""
    t = tok.rstrip(":.")
    if t.count(".") != 3 and t.count(":") < 2:
        return None
    return canon(t)


def addresses_in(text):
    return {c for c in (address_token(t) for t in HEXISH.findall(text)) if c}


def expected_time_utc(fd, entry):
    """fail2ban's expected time as UTC (None when not given or not checkable)."""
    t = fd.get("time")
    if not t or entry["journal"]:
        return None
    try:
        local = datetime.datetime.strptime(t[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    has_offset = re.match(r"^(<\d+>\d+ )?\d{4}-\d\d-\d\dT", entry["line"]) is not None
    if not has_offset:  # BSD syslog: fail2ban reads it in its zone, we with --timezone UTC
        return local.replace(tzinfo=datetime.timezone.utc)
    try:
        from zoneinfo import ZoneInfo
        return local.replace(tzinfo=ZoneInfo("Europe/Zurich")).astimezone(datetime.timezone.utc)
    except Exception:
        return None


# ---------------------------------------------------------------- onboard runs

SKIPPED = re.compile(r"skipped \d+ lines? that (?:is|are) not (?:an )?authentication events?: (.*)$", re.M)


def skip_counts(stderr):
    """The import's skipped-line kinds ("55 other sshd, 30 disconnect") as a dict."""
    out = {}
    for m in SKIPPED.finditer(stderr or ""):
        for part in m.group(1).split(", "):
            n, _, kind = part.strip().partition(" ")
            if n.isdigit():
                out[kind] = out.get(kind, 0) + int(n)
    return out


class Runner:
    def __init__(self, onboard, sshd_mode, extra_args, workdir):
        self.onboard = onboard
        self.sshd_mode = sshd_mode
        self.extra_args = extra_args
        self.workdir = workdir

    def import_cmd(self, store, year, path):
        cmd = [self.onboard, "import", "--store", store, "--from", "sshd", "--year", str(year),
               "--timezone", "UTC", "--max-clock-skew", "none"]
        if self.sshd_mode:
            cmd += ["--sshd-mode", self.sshd_mode]
        return cmd + self.extra_args + [path]

    def export(self, store, since=None):
        if not os.path.exists(store):
            return [], None
        cmd = [self.onboard, "export", "--store", store]
        if since:
            cmd += ["--since-seq", str(since)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            return [], p.stderr.strip()
        return [json.loads(x) for x in p.stdout.splitlines() if x.strip()], None

    def alone(self, text, year):
        d = tempfile.mkdtemp(prefix="line-", dir=self.workdir)
        try:
            path = os.path.join(d, "line.log")
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text + "\n")
            store = os.path.join(d, "store.lmdb")
            p = subprocess.run(self.import_cmd(store, year, path), capture_output=True, text=True)
            if p.returncode != 0:
                return {"rc": p.returncode, "events": [], "stderr": p.stderr.strip()}
            events, err = self.export(store)
            return {"rc": 0, "events": events, "stderr": err or "", "skipped": skip_counts(p.stderr)}
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def prefix(self, entries, upto, total_lines, year, blank):
        """Import the log up to line `upto` (lines in `blank` left empty) into a fresh store."""
        d = tempfile.mkdtemp(prefix="prefix-", dir=self.workdir)
        try:
            slots = [""] * total_lines
            for e in entries:
                if e["lineno"] <= upto and e["lineno"] not in blank:
                    slots[e["lineno"] - 1] = e["input"]
            path = os.path.join(d, "context.log")
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write("\n".join(slots[:upto]) + "\n")
            store = os.path.join(d, "store.lmdb")
            p = subprocess.run(self.import_cmd(store, year, path), capture_output=True, text=True)
            if p.returncode != 0:
                return {"rc": p.returncode, "events": {}, "stderr": p.stderr.strip(), "skipped": {}}
            events, err = self.export(store)
            return {"rc": 0, "stderr": err or "", "skipped": skip_counts(p.stderr),
                    "events": {ev["id"]: {k: v for k, v in ev.items() if k != "seq"} for ev in events}}
        finally:
            shutil.rmtree(d, ignore_errors=True)


def in_context(runner, pool, entries, total_lines, year, failed_alone):
    """Per log line: the events the whole log gives for it (see the module doc)."""
    blank = set(failed_alone)
    failed = {}
    prefixes = {}
    while True:
        todo = [e["lineno"] for e in entries if e["lineno"] not in prefixes and e["lineno"] not in blank]
        futs = {n: pool.submit(runner.prefix, entries, n, total_lines, year, frozenset(blank)) for n in todo}
        for n, fut in futs.items():
            prefixes[n] = fut.result()
        first_bad = next((e["lineno"] for e in entries if e["lineno"] in prefixes and prefixes[e["lineno"]]["rc"] != 0), None)
        if first_bad is None:
            break
        failed[first_bad] = prefixes[first_bad]
        blank.add(first_bad)
        prefixes = {n: r for n, r in prefixes.items() if n < first_bad}
    results, prev, prev_skips = {}, {}, {}
    origin, completed, rewritten = {}, {}, []
    for e in entries:
        n = e["lineno"]
        if n in failed:
            results[n] = {"rc": failed[n]["rc"], "events": [], "stderr": failed[n]["stderr"], "skipped": {}}
            continue
        if n in blank:  # the line alone makes the import fail: it would fail the whole log too
            results[n] = {"rc": failed_alone[n], "events": [], "skipped": {},
                          "stderr": "left out of the in-context log: the line alone makes the import fail"}
            continue
        cur = prefixes[n]
        for i, ev in cur["events"].items():
            if i not in prev:
                origin[i] = n
                completed[i] = n
            elif prev[i] != ev:
                completed[i] = n
                rewritten.append({"id": i, "origin": origin.get(i), "by": n, "before": prev[i], "after": ev})
        skips = cur["skipped"]
        results[n] = {"rc": 0, "events": [], "stderr": "", "origin": [],
                      "skipped": {k: v - prev_skips.get(k, 0) for k, v in skips.items() if v > prev_skips.get(k, 0)}}
        prev, prev_skips = cur["events"], skips
    for i, ev in prev.items():  # the whole log's events, each on the line that completed it
        results[completed[i]]["events"].append(ev)
        if origin[i] != completed[i]:
            results[completed[i]]["origin"].append(origin[i])
    return results, rewritten


# ---------------------------------------------------------------- scoring

def is_counted(ev):
    t = ev.get("type", "")
    if t == "sign_in_failed":
        return ev.get("reason") in COUNTED_REASONS
    if t in ALWAYS_COUNTED:
        return True
    return "client_address" in ev and any(w in t for w in FAILURE_WORDS)


def describe(result):
    events = result["events"]
    note = (" [event(s) of line %s completed here]" % ", ".join(map(str, result["origin"]))) if result.get("origin") else ""
    if not events:
        sk = result.get("skipped") or {}
        return "no event" + (" (skipped: %s)" % ", ".join(sorted(sk)) if sk else "")
    parts = []
    for ev in events:
        s = ev.get("type", "?")
        if ev.get("reason"):
            s += "/" + ev["reason"]
        s += " user=%s" % json.dumps(ev.get("user"))
        s += " addr=%s" % (ev.get("client_address") or "-")
        parts.append(s)
    return "; ".join(parts) + note


def outcome(result):
    """A short form of what one import gave, for grouping."""
    if result["rc"] != 0:
        return "import exit %d" % result["rc"]
    if not result["events"]:
        sk = result.get("skipped") or {}
        return "skipped " + "/".join(sorted(sk)) if sk else "nothing"
    return ", ".join(sorted({ev.get("type", "?") + ("/" + ev["reason"] if ev.get("reason") else "") +
                             ("" if ev.get("client_address") else " (no addr)") for ev in result["events"]}))


def expectation(entry, linked):
    fd = entry["faildata"]
    if not fd.get("match", False):
        return "no failure"
    host = expected_host(fd)
    s = "failure host=%s" % (host if host is not None else ("(none given; PID-linked %s)" % linked if linked else "(none given)"))
    if "user" in fd:
        s += " user=%s" % json.dumps(fd["user"])
    if "users" in fd:
        s += " users=%s" % json.dumps(fd["users"])
    return s


def classify(entry, result, linked):
    """One line's outcome: (category, extra_address, time_differs)."""
    fd = entry["faildata"]
    if result["rc"] != 0:
        return "import_failed", False, False
    counted = [ev for ev in result["events"] if is_counted(ev)]
    if not fd.get("match", False):
        extra = any(ev.get("client_address") for ev in counted)
        return ("nonfailure_counted" if counted else "nonfailure_ok"), extra, False
    host = expected_host(fd)
    want = canon(host) if host is not None else linked
    hostname = host is not None and canon(host) is None
    if not counted:
        return ("hostname_not_counted" if hostname else "not_counted"), False, False
    if hostname:
        extra = any(ev.get("client_address") for ev in counted)
        return "hostname_counted", extra, False
    right = [ev for ev in counted if want is not None and canon(ev.get("client_address")) == want]
    extra = any(ev.get("client_address") and canon(ev["client_address"]) != want for ev in counted)
    if not right:
        return "counted_wrong_host", extra, False
    users = None
    if "user" in fd:
        users = {fd["user"]}
    elif "users" in fd:
        users = set(fd["users"])
    # An empty name is no user in the store (its envelope has no empty user id): fail2ban's "" is
    # our null.
    if users is not None and "" in users:
        users = (users - {""}) | {None}
    if users is not None and not any(ev.get("user") in users for ev in right):
        return "counted_wrong_user", extra, False
    exp_t = expected_time_utc(fd, entry)
    time_differs = False
    if exp_t is not None:
        ats = {ev.get("at", "")[:19] for ev in right}
        time_differs = exp_t.strftime("%Y-%m-%dT%H:%M:%S") not in ats
    return "counted_right", extra, time_differs


CATEGORIES = [
    ("failures", "fail2ban failures"),
    ("counted_right", "  counted, right host (and user)"),
    ("counted_wrong_user", "  counted, right host, wrong user"),
    ("counted_wrong_host", "  counted, wrong or no host"),
    ("not_counted", "  not counted"),
    ("hostname_counted", "  host name in fail2ban: counted"),
    ("hostname_not_counted", "  host name in fail2ban: not counted"),
    ("import_failed_failure", "  import failed"),
    ("nonfailures", "fail2ban non-failures"),
    ("nonfailure_counted", "  counted (must be 0)"),
    ("import_failed_nonfailure", "  import failed"),
    ("extra_address", "lines where we give an address fail2ban does not"),
    ("import_failed", "lines that make the import fail"),
    ("time_differs", "counted right but at != fail2ban's time"),
]


def tally(rows):
    t = {k: 0 for k, _ in CATEGORIES}
    for r in rows:
        failure = r["entry"]["faildata"].get("match", False)
        cat = r["cat"]
        t["failures" if failure else "nonfailures"] += 1
        if cat == "import_failed":
            t["import_failed"] += 1
            t["import_failed_failure" if failure else "import_failed_nonfailure"] += 1
        elif cat in t:
            t[cat] += 1
        if r["extra"]:
            t["extra_address"] += 1
        if r["time_differs"]:
            t["time_differs"] += 1
    return t


def shape(line):
    """The message's shape, to group misses: time, host, PID, addresses, users, numbers taken out;
    an unusual line prefix ([sshd] without PID, RFC 5424, Solaris [ID …], journal kernel:) kept."""
    m = PID.search(line)
    msg = line[m.end():] if m else line
    mark = ""
    if m and m.group(0).startswith("[sshd]"):
        mark = "[sshd] "
    elif m and m.group(0).startswith("sshd ") and line.startswith("<"):
        mark = "<RFC5424> "
    msg = HEXISH.sub(lambda x: "ADDR" + x.group(0)[len(x.group(0).rstrip(":.")):] if address_token(x.group(0)) else x.group(0), msg)
    msg = re.sub(r"\b(from|FROM|connect from \S+ \() ?(?!ADDR)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b", r"\1 ADDR", msg)
    msg = re.sub(r"(for (?:invalid user |illegal user )?).*? from ", r"\1USER from ", msg)
    msg = re.sub(r"((?:authenticating|invalid) user )(?:(?! from ).)*?(?= ADDR)", r"\1USER", msg)
    msg = re.sub(r"^(?:error: )?User \S+ (from|not)", r"User USER \1", msg)
    msg = re.sub(r"^(?:error|fatal): (?:PAM: )?", "", msg)
    msg = re.sub(r"ADDR( port \d+)?:\s*(\d+):", r"ADDR: code\2:", msg)
    msg = re.sub(r"code\d+|\d+", lambda x: x.group(0)[4:] if x.group(0).startswith("code") else "N", msg)
    msg = re.sub(r" port N| via ADDR| \[preauth\]|(?<= sshN):.*$", "", msg)
    msg = re.sub(r"^kernel: ?\[ *N\.N\]:? ", "kernel:[…] ", msg)
    msg = re.sub(r"^[Aa]uthentication (?:failure|error)", "authentication failure|error", msg)
    words = msg.split()
    return mark + " ".join(words[:10]) + (" …" if len(words) > 10 else "")


PENDING = re.compile(r"pam_unix\(sshd:auth\): authentication failure|Disconnecting: Too many|Failed publickey|not allowed because account is locked")


def linked_hosts(entries):
    """fail2ban's multi-line cases: failures whose host is on an earlier line of the same PID,
    and failures fail2ban reports on a line that ends a connection (pending earlier failures)."""
    out = {}
    by_pid = {}
    for e in entries:
        pid = line_pid(e["line"])
        fd = e["faildata"]
        host = expected_host(fd)
        here = addresses_in(e["line"])
        if fd.get("match", False):
            earlier = [x for x in by_pid.get(pid, []) if pid]
            want = canon(host) if host is not None else None
            reason = None
            if want and want not in here:
                src = [x for x in earlier if want in addresses_in(x["line"])]
                reason = ("host %s from earlier line(s) %s of sshd[%s]" % (host, ", ".join(str(x["lineno"]) for x in src[-3:]) or "?", pid))
            elif host is None:
                cand = [a for x in earlier for a in addresses_in(x["line"])]
                want = cand[-1] if cand else None
                reason = "no host in failJSON; fail2ban's id is the mlfid of sshd[%s]%s" % (pid, (", whose earlier lines give %s" % want) if want else "")
            elif re.search(r"Connection closed by [0-9A-Fa-f:.]+(?: port \d+)? \[preauth\]|Accepted \S+ for|Received disconnect from \S+?:? 11:|Received disconnect from \S+ port \d+:11:", e["line"]) and any(
                    PENDING.search(x["line"]) for x in earlier):
                pend = [x for x in earlier if PENDING.search(x["line"])]
                reason = "pending failure(s) of earlier line(s) %s of sshd[%s] (same mlfid), reported on this line" % (
                    ", ".join(str(x["lineno"]) for x in pend[-3:]), pid)
            if reason:
                out[e["lineno"]] = {"host": want, "why": reason}
        if pid:
            by_pid.setdefault(pid, []).append(e)
    return out


# ---------------------------------------------------------------- main

def alone_key(e):
    fd = e["faildata"]
    return (e["input"], int(fd["time"][:4]) if fd.get("time") else 2005)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--onboard", required=True, help="path to the onboard binary")
    ap.add_argument("--log", action="append", required=True, help="fail2ban annotated log (repeatable)")
    ap.add_argument("--sshd-mode", choices=("normal", "aggressive"), help="pass --sshd-mode to onboard import")
    ap.add_argument("--journal", action="store_true", help="treat every --log as journal (give lines a journalctl time); files with fileOptions logtype journal are so anyway")
    ap.add_argument("--import-arg", action="append", default=[], help="extra argument for onboard import (repeatable), e.g. --import-arg=--device=f2b")
    ap.add_argument("--jobs", type=int, default=2, help="parallel imports (default 2)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--misses", choices=("all", "none"), default="all", help="list every miss (default) or none")
    args = ap.parse_args()

    onboard = os.path.abspath(args.onboard)
    workdir = tempfile.mkdtemp(prefix="fail2ban-score-")
    runner = Runner(onboard, args.sshd_mode, args.import_arg, workdir)
    files = []
    for path in args.log:
        entries, notes, total = parse_fail2ban(path, force_journal=args.journal)
        years = [int(e["faildata"]["time"][:4]) for e in entries if e["faildata"].get("time")]
        files.append({"path": path, "name": os.path.basename(path), "entries": entries, "notes": notes,
                      "total": total, "year": years[0] if years else 2005})

    alone_cache = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {}
            for f in files:
                for e in f["entries"]:
                    key = alone_key(e)
                    if key not in futures:
                        futures[key] = pool.submit(runner.alone, e["input"], key[1])
            for key, fut in futures.items():
                alone_cache[key] = fut.result()
            contexts = []
            for f in files:
                failed_alone = {e["lineno"]: alone_cache[alone_key(e)]["rc"] for e in f["entries"] if alone_cache[alone_key(e)]["rc"] != 0}
                contexts.append(in_context(runner, pool, f["entries"], f["total"], f["year"], failed_alone))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    report = {"onboard": args.onboard, "sshd_mode": args.sshd_mode, "files": []}
    out = []
    for f, (ctx, rewritten) in zip(files, contexts):
        links = linked_hosts(f["entries"])
        per_mode = {}
        misses = {}
        for e in f["entries"]:
            res = {"alone": alone_cache[alone_key(e)], "context": ctx[e["lineno"]]}
            linked = links.get(e["lineno"], {}).get("host")
            for how in ("alone", "context"):
                cat, extra, tdiff = classify(e, res[how], linked)
                tdiff = tdiff and how == "alone"  # in context the year is inferred across the file
                for mode in e["modes"]:
                    per_mode.setdefault(mode, {"alone": [], "context": []})[how].append(
                        {"entry": e, "cat": cat, "extra": extra, "time_differs": tdiff})
                if cat not in ("counted_right", "nonfailure_ok", "hostname_counted") or extra:
                    m = misses.setdefault(e["lineno"], {"entry": e, "res": res, "cats": {}, "modes": e["modes"]})
                    m["cats"][how] = cat + (" +extra address" if extra else "")
        tables = {mode: {how: tally(rows) for how, rows in v.items()} for mode, v in per_mode.items()}
        ordered = [m for m in MODES if m in tables] + [m for m in tables if m not in MODES]
        fr = {"file": f["path"], "lines_tested": len(f["entries"]), "notes": f["notes"],
              "modes": {m: tables[m] for m in ordered},
              "misses": [], "multiline": []}
        out.append("== %s: %d tested lines (%d failJSON), first-line year %d" % (
            f["name"], len(f["entries"]), sum(1 for e in f["entries"] if e["faildata"]), f["year"]))
        for n in f["notes"]:
            out.append("   note: " + n)
        fr["rewritten"] = [{"origin": r["origin"], "by": r["by"], "before": r["before"], "after": r["after"]} for r in rewritten]
        if rewritten:
            out.append("   in context, %d event(s) rewritten by a later line (re-importing the grown log into the same store fails): %s" % (
                len(rewritten), ", ".join("L%s by L%d" % (r["origin"], r["by"]) for r in rewritten)))
        header = "%-52s" % "" + "".join("%-17s" % m for m in ordered)
        out.append(header)
        out.append("%-52s" % "" + "".join("%-17s" % "alone / context" for _ in ordered))
        for k, label in CATEGORIES:
            cells = "".join("%-17s" % ("%d / %d" % (tables[m]["alone"][k], tables[m]["context"][k])) for m in ordered)
            out.append("%-52s%s" % (label, cells))
        groups, outcomes = {}, {}
        for lineno in sorted(misses):
            m = misses[lineno]
            e = m["entry"]
            item = {"line": lineno, "text": e["line"][:160], "modes": m["modes"],
                    "expected": expectation(e, links.get(lineno, {}).get("host")),
                    "alone": m["cats"].get("alone", "ok") + ": " + (describe(m["res"]["alone"]) if m["res"]["alone"]["rc"] == 0 else "exit %d %s" % (m["res"]["alone"]["rc"], m["res"]["alone"]["stderr"].splitlines()[-1] if m["res"]["alone"]["stderr"] else "")),
                    "context": m["cats"].get("context", "ok") + ": " + (describe(m["res"]["context"]) if m["res"]["context"]["rc"] == 0 else "exit %d %s" % (m["res"]["context"]["rc"], m["res"]["context"]["stderr"].splitlines()[-1] if m["res"]["context"]["stderr"] else "")),
                    "shape": shape(e["line"])}
            fr["misses"].append(item)
            groups.setdefault(item["shape"], []).append(lineno)
            outcomes.setdefault(item["shape"], set()).add(outcome(m["res"]["alone"]))
        for lineno, l in sorted(links.items()):
            fr["multiline"].append({"line": lineno, "text": next(e["line"] for e in f["entries"] if e["lineno"] == lineno)[:160], "why": l["why"]})
        if args.misses == "all":
            out.append("-- misses (%d lines)" % len(fr["misses"]))
            for it in fr["misses"]:
                out.append("L%d [%s] %s" % (it["line"], ",".join(it["modes"]) or "not tested", it["text"]))
                out.append("    fail2ban: %s" % it["expected"])
                out.append("    alone:    %s" % it["alone"])
                out.append("    context:  %s" % it["context"])
            out.append("-- misses by shape")
            for sh, nums in sorted(groups.items(), key=lambda x: (-len(x[1]), x[1][0])):
                out.append("  %3d  %s  (lines %s; alone we give: %s)" % (len(nums), sh, ", ".join(map(str, nums)), " | ".join(sorted(outcomes[sh]))))
            out.append("-- fail2ban multi-line cases (host or failure from another line of the same PID)")
            for it in fr["multiline"]:
                out.append("L%d %s\n    %s" % (it["line"], it["text"], it["why"]))
        fr["miss_groups"] = [{"shape": sh, "lines": nums, "we_give": sorted(outcomes[sh])} for sh, nums in sorted(groups.items(), key=lambda x: (-len(x[1]), x[1][0]))]
        report["files"].append(fr)
        out.append("")
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print("\n".join(out))


if __name__ == "__main__":
    main()
