#!/usr/bin/env python3
"""Validates OCSF events, one JSON object per line, against the official OCSF schema.

    validate_ocsf.py [--version 1.8.0] [--show N] FILE.jsonl

The schema is the OCSF server's own export of the released version (`/export/v2/schema`), as the
`ocsf-json-schema` package ships it; that package turns a class into a JSON Schema (draft
2020-12: required attributes, unknown attributes, types, enums, ranges, lengths, patterns, the
class's and objects' constraints) and `jsonschema` applies it. On top, the rules the OCSF
server's validator checks that a JSON Schema cannot say, read from the same export: an enum's
sibling string must be the caption of its value (anything but the caption of Other for 99),
`type_uid` must be `class_uid` x 100 + `activity_id`, `metadata.version` must be the schema's,
profiles must exist, nothing deprecated.

Prints one summary line, the violations counted by kind, and the first N violations; exits 0
when every line is valid, 1 when one is not, 69 when a package is missing (run tools/setup.sh),
65 on an unreadable file. Never uses the network. tools/setup.sh installs the packages into the
virtual environment the tests run this script with.
"""

import argparse
import collections
import json
import re
import sys

try:
    import jsonschema
    import ocsf_json_schema
    from ocsf_json_schema import OcsfJsonSchemaEmbedded, get_ocsf_schema
    from importlib.metadata import version as package_version
except ImportError as error:
    print(f"validate_ocsf: {error.name} is not installed; run tools/setup.sh", file=sys.stderr)
    sys.exit(69)

# The value of Other in every OCSF enum; a 99 whose sibling repeats its caption says nothing.
OTHER = 99

# The server's ranges of the integer types (JSON Schema's "integer" has none): integer_t is a
# signed 64-bit integer, long_t a signed 128-bit one.
RANGES = {"integer_t": (-(2**63), 2**63 - 1), "long_t": (-(2**127), 2**127 - 1)}


class Schema:
    """The released schema of one version, and a JSON Schema validator per class and profiles."""

    def __init__(self, version):
        if version not in ocsf_json_schema.get_packaged_versions():
            raise SystemExit(f"validate_ocsf: ocsf-json-schema {package_version('ocsf-json-schema')} "
                             f"does not ship OCSF {version}")
        self.export = get_ocsf_schema(version=version)
        if self.export.get("version") != version:
            raise SystemExit(f"validate_ocsf: the packaged schema says version {self.export.get('version')!r}, "
                             f"not {version!r}")
        self.version = version
        self.generator = OcsfJsonSchemaEmbedded(self.export)
        self.classes_by_uid = {item["uid"]: item for item in self.export["classes"].values()}
        self.objects = self.export["objects"]
        self.types = self.export["dictionary"]["types"]["attributes"]
        self.validators = {}

    def primitive(self, type_name):
        """`timestamp_t` -> `long_t`: the type a subtype is made of."""
        return self.types.get(type_name, {}).get("type", type_name)

    def validator(self, class_name, profiles):
        key = (class_name, tuple(sorted(set(profiles))))
        if key not in self.validators:
            document = self.generator.get_class_schema(class_name, list(key[1]))
            jsonschema.Draft202012Validator.check_schema(document)
            self.validators[key] = jsonschema.Draft202012Validator(document)
        return self.validators[key]


def kind_path(path):
    """`$.metadata.profiles[0]` -> `metadata.profiles[]`: violations of one kind share it."""
    return re.sub(r"\[\d+\]", "[]", path).removeprefix("$.").removeprefix("$")


def short(value, limit=160):
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def schema_violations(validator, event):
    """(kind, path, message) for each way `event` breaks its class's JSON Schema."""
    found = []
    # jsonschema reports each missing attribute as an error of its own that lists them all.
    reported = set()
    for error in validator.iter_errors(event):
        path = kind_path(error.json_path)
        prefix = f"{path}." if path else ""
        if error.validator in ("anyOf", "oneOf") and all("required" in s for s in error.validator_value):
            names = "/".join(s["required"][0] for s in error.validator_value)
            rule = "at least one of" if error.validator == "anyOf" else "exactly one of"
            found.append((f"{path or '(event)'}: {rule} {names}", error.json_path,
                          f"has none of {names}: {short(error.instance)}"))
        elif error.validator in ("required", "additionalProperties"):
            if (error.json_path, error.validator) in reported:
                continue
            reported.add((error.json_path, error.validator))
            if error.validator == "required":
                for name in error.validator_value:
                    if name not in error.instance:
                        found.append((f"{prefix}{name}: required", f"{error.json_path}.{name}", "required, missing"))
                continue
            schema_properties = error.schema.get("properties", {})
            for name in error.instance:
                if name not in schema_properties:
                    found.append((f"{prefix}{name}: unknown attribute", f"{error.json_path}.{name}",
                                  f"not an attribute of {error.schema.get('title')}"))
        else:
            found.append((f"{path or '(event)'}: {error.validator}", error.json_path, short(error.message)))
    return found


def rule_violations(schema, event, item, path):
    """The server validator's rules a JSON Schema cannot express, on `event` against `item`
    (a class or object of the export), recursing into objects."""
    found = []
    if "@deprecated" in item:
        found.append((f"{kind_path(path) or '(event)'}: deprecated", path or "$", f"{item['name']} is deprecated"))
    attributes = item.get("attributes", {})
    for name, value in event.items():
        attribute = attributes.get(name)
        if attribute is None:
            continue  # the JSON Schema reports unknown attributes
        here = f"{path}.{name}" if path else f"$.{name}"
        if "@deprecated" in attribute:
            found.append((f"{kind_path(here)}: deprecated", here, f"{name} is deprecated"))
        bounds = RANGES.get(schema.primitive(attribute.get("type")))
        if bounds and isinstance(value, int) and not isinstance(value, bool) and not bounds[0] <= value <= bounds[1]:
            found.append((f"{kind_path(here)}: out of range", here,
                          f"{value} is outside {attribute.get('type')} ({bounds[0]} to {bounds[1]})"))
        enum = attribute.get("enum")
        sibling = attribute.get("sibling")
        if enum and sibling and sibling in event and not attribute.get("is_array"):
            member = enum.get(str(value))
            if member is not None:
                caption = member.get("caption")
                label = event[sibling]
                there = f"{path}.{sibling}" if path else f"$.{sibling}"
                if value == OTHER and label == caption:
                    found.append((f"{kind_path(there)}: repeats the caption of 99", there,
                                  f"{name} is 99 ({caption!r}): {sibling} should say what it is, not {label!r}"))
                elif value != OTHER and label != caption:
                    found.append((f"{kind_path(there)}: not the caption of {name}", there,
                                  f"{name} {value} is {caption!r}, {sibling} is {short(label)!r}"))
                if "@deprecated" in member:
                    found.append((f"{kind_path(here)}: deprecated value", here, f"{name} {value} is deprecated"))
        if attribute.get("type") == "object_t":
            target = schema.objects.get(attribute.get("object_type"))
            values = value if attribute.get("is_array") and isinstance(value, list) else [value]
            for index, element in enumerate(values):
                if isinstance(element, dict) and target is not None and target.get("attributes"):
                    at = f"{here}[{index}]" if attribute.get("is_array") else here
                    found.extend(rule_violations(schema, element, target, at))
    return found


def event_violations(schema, event):
    if not isinstance(event, dict):
        return [("(event): not an object", "$", short(event))]
    klass = schema.classes_by_uid.get(event.get("class_uid"))
    if klass is None:
        return [("class_uid: unknown class", "$.class_uid", short(event.get("class_uid")))]
    metadata = event.get("metadata") if isinstance(event.get("metadata"), dict) else {}
    profiles = metadata.get("profiles", [])
    found = []
    if not isinstance(profiles, list) or not all(isinstance(p, str) for p in profiles):
        profiles = []  # the JSON Schema reports the wrong type
    for index, profile in enumerate(profiles):
        if profile not in schema.export["profiles"]:
            found.append(("metadata.profiles[]: unknown profile", f"$.metadata.profiles[{index}]", profile))
    profiles = [p for p in profiles if p in schema.export["profiles"]]
    found.extend(schema_violations(schema.validator(klass["name"], profiles), event))
    found.extend(rule_violations(schema, event, klass, ""))
    if metadata.get("version") != schema.version:
        found.append(("metadata.version: not the schema's", "$.metadata.version",
                      f"{short(metadata.get('version'))} is not {schema.version}"))
    class_uid, activity, type_uid = event.get("class_uid"), event.get("activity_id"), event.get("type_uid")
    if all(isinstance(v, int) for v in (class_uid, activity, type_uid)) and type_uid != class_uid * 100 + activity:
        found.append(("type_uid: not class_uid x 100 + activity_id", "$.type_uid",
                      f"{type_uid} is not {class_uid} x 100 + {activity}"))
    return found


def main():
    parser = argparse.ArgumentParser(description="Validate OCSF JSONL against the official schema.")
    parser.add_argument("file")
    parser.add_argument("--version", default="1.8.0")
    parser.add_argument("--show", type=int, default=5, help="how many violations to print in full")
    options = parser.parse_args()
    schema = Schema(options.version)

    kinds = collections.Counter()
    first_line = {}
    examples = []
    lines = invalid = 0
    try:
        with open(options.file, "rb") as file:
            for number, raw in enumerate(file, start=1):
                lines += 1
                try:
                    event = json.loads(raw)
                except ValueError as error:
                    found = [("(line): not JSON", "$", str(error))]
                else:
                    found = event_violations(schema, event)
                if found:
                    invalid += 1
                for kind, path, message in found:
                    kinds[kind] += 1
                    first_line.setdefault(kind, number)
                    if len(examples) < options.show:
                        examples.append(f"  line {number}: {path}: {message}")
    except OSError as error:
        print(f"validate_ocsf: cannot read {options.file}: {error.strerror}", file=sys.stderr)
        return 65

    print(f"validated {lines} lines against OCSF {schema.version} (ocsf-json-schema "
          f"{package_version('ocsf-json-schema')}, jsonschema {package_version('jsonschema')}): "
          f"{invalid} invalid, {len(kinds)} {'kind' if len(kinds) == 1 else 'kinds'} of violation")
    for kind, count in kinds.most_common():
        print(f"{count:8} {kind} (first on line {first_line[kind]})")
    if examples:
        print(f"first {len(examples)} violations:")
        print("\n".join(examples))
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
