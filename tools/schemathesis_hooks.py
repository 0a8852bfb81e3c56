"""Schemathesis hooks for checking docs/openapi.yaml against `onboard serve`
(tools/schemathesis.toml loads them; Tests/OnboardCLITests/OpenAPISchemathesisTests.swift runs it).

A schema states what each value may be, not how values of one request relate to each other or to
the server's state. docs/openapi.yaml states those rules in prose; this module applies them to the
requests schemathesis generates as valid (positive cases) so that the server is expected to accept
them, and leaves every other case as generated:

- an upload names the path's device in `body.device` and in every event, its seqs are
  consecutive, `signed_head` names its last record, its `keys.users` are named by pseudonyms
  (32 lowercase hex digits) and its `keys.sealed` by decimal seqs: OpenAPI 3.0 can say none of
  this (it has no `propertyNames`);
- an event is dated at most the server's clock skew after its clock: a later year is moved back by
  whole 400-year Gregorian cycles, which keep the month, the day (29 February too) and the time;
- a history's, count's or export's `until` is not before its `since` (the two are swapped);
- a history `cursor` is one the server issued: the test passes one in ONBOARD_ISSUED_CURSOR; without
  it the parameter is left out; an actions `cursor` likewise, and none is issued, so it is left out;
- a history `wait` above 0 needs `order=oldest` and a cursor, and holds the request while the page
  is empty: valid cases get `wait=0`, so no generated request sits out a wait (the Swift suites
  test waiting, Tests/OnboardingServerTests/HistoryConsoleTests.swift);
- a count's range fits in `buckets` buckets of 7 days (the largest size): a longer one is cut to
  that from `since` (or back from `until`).

Two answers remain to a positive upload, and the schema documents both: 409 when its hashes do not
chain (no generator can forge BLAKE2b-256) and 200 for the documented example, whose hashes do;
tools/schemathesis.toml accepts exactly these two. No check and no failure is filtered here.
"""

import copy
import datetime
import hashlib
import os
import re

import schemathesis

UPLOAD = "POST /v1/devices/{device}/events"
HISTORY = ("GET /v1/users/{user}/history", "GET /v1/devices/{device}/history")
COUNTS = ("GET /v1/users/{user}/counts", "GET /v1/devices/{device}/counts")
EXPORTS = ("GET /v1/users/{user}/export", "GET /v1/devices/{device}/export")
ACTIONS = "GET /v1/actions"
# The largest count bucket, 7 days, and the default number of buckets (docs/sync-protocol.md).
WEEK = datetime.timedelta(days=7)
DEFAULT_BUCKETS = 100
FIRST = datetime.datetime(1, 1, 1, tzinfo=datetime.timezone.utc)
LAST = datetime.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=datetime.timezone.utc)
# The upper bound of a seq (u64), and the 400-year cycle after which Gregorian calendars repeat.
MAXIMUM_SEQ = 2**64 - 1
GREGORIAN_CYCLE_YEARS = 400
PSEUDONYM = re.compile(r"[0-9a-f]{32}")
DECIMAL = re.compile(r"[0-9]{1,19}")


def _is_positive(case):
    return case.meta is not None and case.meta.generation.mode.is_positive


def _moved_into_the_past(at):
    """`at`, or when it is later than now, `at` with its year moved back by 400-year cycles until
    it is before this year."""
    now = datetime.datetime.now(datetime.timezone.utc)
    # Both in the fixed-width form YYYY-MM-DDTHH:MM:SS, so text order is time order.
    if at[:19] <= now.strftime("%Y-%m-%dT%H:%M:%S"):
        return at
    year = int(at[:4])
    while year >= now.year:
        year -= GREGORIAN_CYCLE_YEARS
    return "%04d%s" % (year, at[4:])


def _align_upload(case):
    if not isinstance(case.body, dict) or not isinstance(case.body.get("records"), list) or not case.body["records"]:
        return
    # A copy: generated bodies share nested objects (one event dict in two records, or in two cases).
    body = case.body = copy.deepcopy(case.body)
    device = case.path_parameters.get("device")
    records = body["records"]
    body["device"] = device
    first = records[0]["event"]["seq"]
    first = min(first, MAXIMUM_SEQ - len(records) + 1)
    for index, record in enumerate(records):
        event = record["event"]
        event["device"] = device
        event["seq"] = first + index
        event["at"] = _moved_into_the_past(event["at"])
    head = body.get("signed_head")
    if isinstance(head, dict):
        head["seq"] = records[-1]["event"]["seq"]
        head["hash"] = records[-1]["hash"]
    keys = body.get("keys")
    if isinstance(keys, dict):
        users = keys.get("users")
        if isinstance(users, dict):
            keys["users"] = {
                name if PSEUDONYM.fullmatch(name) else hashlib.md5(name.encode("utf-8", "surrogatepass")).hexdigest(): key
                for name, key in users.items()
            }
        sealed = keys.get("sealed")
        if isinstance(sealed, dict):
            keys["sealed"] = {
                name if DECIMAL.fullmatch(name) else str(int(hashlib.md5(name.encode("utf-8", "surrogatepass")).hexdigest()[:15], 16)): value
                for name, value in sealed.items()
            }


def _instant(text):
    """A Timestamp as a tuple in time order: the date and time, then the milliseconds."""
    fraction = text[20:-1] if len(text) > 20 else ""
    return text[:19], int((fraction + "000")[:3])


def _align_range(query):
    if query.get("since") and query.get("until") and _instant(query["until"]) < _instant(query["since"]):
        query["since"], query["until"] = query["until"], query["since"]


def _align_history(case):
    query = case.query
    _align_range(query)
    if query.get("cursor"):
        issued = os.environ.get("ONBOARD_ISSUED_CURSOR")
        if issued:
            query["cursor"] = issued
        else:
            del query["cursor"]
    if "wait" in query:
        query["wait"] = 0


def _parse(text):
    """A Timestamp as a datetime (years 0001–9999, as Python's)."""
    day, time = text[:-1].split("T")
    fraction = time[8:].lstrip(".")
    moment = datetime.datetime.strptime(day + "T" + time[:8], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return moment + datetime.timedelta(milliseconds=int((fraction + "000")[:3]))


def _format(moment):
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (moment.year, moment.month, moment.day, moment.hour, moment.minute,
                                                    moment.second, moment.microsecond // 1000)


def _align_counts(case):
    query = case.query
    _align_range(query)
    buckets = query.get("buckets")
    # One bucket fewer: a range does not start on a bucket boundary, so it may touch one more.
    longest = WEEK * (max(0, buckets - 1) if isinstance(buckets, int) and buckets >= 1 else DEFAULT_BUCKETS - 1)
    since, until = query.get("since"), query.get("until")
    if since:
        start = _parse(since)
        end = min(LAST, start + longest) if LAST - start > longest else LAST
        if not until or _parse(until) > end:
            query["until"] = _format(end)
    elif until:
        end = _parse(until)
        query["since"] = _format(max(FIRST, end - longest) if end - FIRST > longest else FIRST)


def _align(case):
    label = case.operation.label
    if label == UPLOAD:
        _align_upload(case)
    elif label in HISTORY and case.query:
        _align_history(case)
    elif label in COUNTS and case.query:
        _align_counts(case)
    elif label in EXPORTS and case.query:
        _align_range(case.query)
    elif label == ACTIONS and case.query and "cursor" in case.query:
        del case.query["cursor"]


@schemathesis.hook
def map_case(context, case):
    if _is_positive(case):
        _align(case)
    return case


@schemathesis.hook
def before_add_examples(context, examples):
    # The examples phase builds its cases from the schema's examples without map_case.
    for case in examples:
        if _is_positive(case):
            _align(case)
