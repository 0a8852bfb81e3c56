#!/usr/bin/env python3
"""The examples of docs/projections.md § Examples: events in, JSON out, made by the real CLI.

    tools/projection-examples.py "TITLE" LOG.jsonl TIME [TIME ...]
    tools/projection-examples.py --rewrite

The first imports LOG.jsonl into a throwaway store with the built `onboard`
(.build/debug/onboard), runs `onboard session --json --at TIME` for each TIME and prints the
markdown: the log as a ```jsonl block, then each command line and its output as a ```json block
(one flow member a line; the test, ProjectionsDocExampleTests, compares parsed JSON). Paste it
into the section. The second runs every example already in the section again, with its own log
and times, and rewrites the section's JSON blocks with what the CLI prints now (after a change
to the session's JSON form).
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ONBOARD = ROOT / ".build" / "debug" / "onboard"


def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def readable(state: dict) -> str:
    """One member of the flow a line, each value compact, members in the CLI's order: a session
    reads top to bottom."""
    members = []
    for key, value in state.items():
        if key == "flow":
            flow = ",\n".join(f' "{name}":{compact(item)}' for name, item in value.items())
            members.append(f'"flow":{{\n{flow}}}')
        else:
            members.append(f'"{key}":{compact(value)}')
    return "{" + ",".join(members) + "}"


def example(title: str, lines: list[str], times: list[str]) -> str:
    device = json.loads(lines[0])["device"]
    with tempfile.TemporaryDirectory() as directory:
        log = Path(directory) / "log.jsonl"
        log.write_text("\n".join(lines) + "\n", encoding="utf-8")
        store = str(Path(directory) / "store")
        subprocess.run([str(ONBOARD), "import", str(log), "--store", store, "--device", device, "--max-clock-skew", "none"],
                       check=True, stdout=subprocess.DEVNULL)
        out = [f"### {title}", "", "```jsonl", *lines, "```"]
        for time in times:
            result = subprocess.run([str(ONBOARD), "session", "--json", "--store", store, "--device", device, "--at", time],
                                    check=True, capture_output=True, text=True)
            out += ["", f"`onboard session --json --at {time}` then prints:", "", "```json", readable(json.loads(result.stdout)), "```"]
    return "\n".join(out)


def rewrite() -> int:
    """Every example of the section made again; the prose around them is kept."""
    doc = ROOT / "docs" / "projections.md"
    text = doc.read_text(encoding="utf-8")
    heading = "## Examples: events in, JSON out"
    start = text.index(heading)
    section = text[start:]
    end = section.find("\n## ", len(heading))
    section, rest = (section, "") if end < 0 else (section[:end + 1], section[end + 1:])
    parts = section.split("\n### ")
    made = [parts[0].rstrip("\n")]
    for part in parts[1:]:
        title = part.split("\n", 1)[0]
        body = part.split("```jsonl\n", 1)[1]
        lines = [line for line in body.split("\n```", 1)[0].split("\n") if line.strip()]
        times = [line.split("--at ", 1)[1].split("`", 1)[0] for line in part.split("\n") if line.startswith("`onboard session --json --at ")]
        made.append(example(title, lines, times))
    doc.write_text(text[:start] + "\n\n".join(made) + "\n" + ("\n" + rest if rest else ""), encoding="utf-8")
    print(f"rewrote {len(made) - 1} examples in {doc}")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--rewrite"]:
        return rewrite()
    if len(sys.argv) < 4:
        print(__doc__.strip(), file=sys.stderr)
        return 64
    title, log, times = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    print(example(title, lines, times))
    return 0


if __name__ == "__main__":
    sys.exit(main())
