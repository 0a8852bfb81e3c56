#!/usr/bin/env python3
"""Prints one example of docs/projections.md § Examples: events in, JSON out, made by the real CLI.

    tools/projection-examples.py "TITLE" LOG.jsonl TIME [TIME ...]

imports LOG.jsonl into a throwaway store with the built `onboard` (.build/debug/onboard), then
runs `onboard session --json --at TIME` for each TIME and prints the markdown: the log as a
```jsonl block, then each command line and its output as a ```json block (pretty-printed; the
test, ProjectionsDocExampleTests, compares parsed JSON). Paste it into the section.
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
    """One member of the flow a line, each value compact: a session reads top to bottom."""
    top = [f'"{key}":{compact(value)}' for key, value in state.items() if key != "flow"]
    flow = [f' "{key}":{compact(value)}' for key, value in state["flow"].items()]
    return "{" + ",".join(top) + ',"flow":{\n' + ",\n".join(flow) + "}}"


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__.strip(), file=sys.stderr)
        return 64
    title, log, times = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
    lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    device = json.loads(lines[0])["device"]
    with tempfile.TemporaryDirectory() as directory:
        store = str(Path(directory) / "store")
        subprocess.run([str(ONBOARD), "import", str(log), "--store", store, "--device", device, "--max-clock-skew", "none"],
                       check=True, stdout=subprocess.DEVNULL)
        out = [f"### {title}", "", "```jsonl", *lines, "```"]
        for time in times:
            result = subprocess.run([str(ONBOARD), "session", "--json", "--store", store, "--device", device, "--at", time],
                                    check=True, capture_output=True, text=True)
            shown = readable(json.loads(result.stdout))
            out += ["", f"`onboard session --json --at {time}` then prints:", "", "```json", shown, "```"]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
