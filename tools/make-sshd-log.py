#!/usr/bin/env python3
"""Writes a synthetic OpenSSH auth.log (BSD syslog, Debian's sshd lines) for timing the sshd
import: `python3 tools/make-sshd-log.py --lines 1000000 > auth.log`.

Seeded and deterministic. Each connection is one sshd process: brute-force connections try up
to six passwords (unknown names through `Invalid user`, PAM's lines and `Failed`, known ones
through PAM and `Failed`), and end with sshd's cut or a close; honest users mistype now and then
and sign in, later sign out. Addresses are from the documentation ranges (RFC 5737, RFC 3849).
"""
import argparse
import datetime
import random
import sys

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
NAMES = ["admin", "oracle", "test", "ubuntu", "git", "deploy", "postgres", "guest", "user", "ftp"]
KNOWN = ["root", "alice", "bob", "carol", "dave"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=32)
    parser.add_argument("--host", default="bastion-1")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    at = datetime.datetime(2026, 11, 1, 0, 0, 0)
    pid = 10_000
    written = 0
    out = sys.stdout
    buffer = []

    def emit(message):
        nonlocal written
        stamp = "%s %2d %02d:%02d:%02d" % (MONTHS[at.month - 1], at.day, at.hour, at.minute, at.second)
        buffer.append("%s %s sshd[%d]: %s\n" % (stamp, options.host, pid, message))
        written += 1
        if len(buffer) >= 10_000:
            out.write("".join(buffer))
            buffer.clear()

    while written < options.lines:
        pid += 1
        at += datetime.timedelta(milliseconds=rng.randint(20, 400))
        if rng.random() < 0.5:
            address = "203.0.113.%d" % rng.randint(1, 254)
        elif rng.random() < 0.8:
            address = "198.51.100.%d" % rng.randint(1, 254)
        else:
            address = "2001:db8::%x" % rng.randint(1, 0xFFFF)
        port = rng.randint(1024, 65535)
        emit("Connection from %s port %d on 192.0.2.10 port 22 rdomain \"\"" % (address, port))
        honest = rng.random() < 0.15
        if honest:
            user = rng.choice(KNOWN)
            for _ in range(rng.choice([0, 0, 0, 1, 2])):
                emit("pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=%s  user=%s" % (address, user))
                emit("Failed password for %s from %s port %d ssh2" % (user, address, port))
            emit("Accepted password for %s from %s port %d ssh2" % (user, address, port))
            emit("pam_unix(sshd:session): session opened for user %s(uid=1000) by (uid=0)" % user)
            emit("Received disconnect from %s port %d:11: disconnected by user" % (address, port))
            emit("Disconnected from user %s %s port %d" % (user, address, port))
            emit("pam_unix(sshd:session): session closed for user %s" % user)
            continue
        known = rng.random() < 0.3
        user = rng.choice(KNOWN if known else NAMES)
        invalid = "" if known else "invalid user "
        if not known:
            emit("Invalid user %s from %s port %d" % (user, address, port))
        tries = rng.randint(1, 6)
        for _ in range(tries):
            if not known:
                emit("pam_unix(sshd:auth): check pass; user unknown")
                emit("pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=%s" % address)
            else:
                emit("pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=%s  user=%s" % (address, user))
            emit("Failed password for %s%s from %s port %d ssh2" % (invalid, user, address, port))
        if tries == 6:
            emit("error: maximum authentication attempts exceeded for %s%s from %s port %d ssh2 [preauth]" % (invalid, user, address, port))
            emit("Disconnecting %suser %s %s port %d: Too many authentication failures [preauth]" % ("invalid " if invalid else "authenticating ", user, address, port))
        else:
            emit("Connection closed by %suser %s %s port %d [preauth]" % ("invalid " if invalid else "authenticating ", user, address, port))
    out.write("".join(buffer))


if __name__ == "__main__":
    main()
