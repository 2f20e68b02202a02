"""Check that a change left the session logs alone: run the same tasks with the code of a git revision and
with this checkout, and compare every log byte for byte once wall-clock values are masked.

    python benchmarks/same_logs.py            # main vs this checkout: 900 generated tasks x 3 arms, and
                                              # the shipped tasks on every arm
    python benchmarks/same_logs.py --against HEAD~1 --model scripted:tools
    python benchmarks/same_logs.py --generated-arms retrieval,memorybank,claims   # other arms on the 900

Wall-clock values live only under `wall*` keys (tasks/logschema.py); each such key's value is replaced by a
placeholder, nothing else is. Exit status 1 when any log differs or exists on one side only.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from anywhere

from benchmarks.scale_targets import (  # noqa: E402  (run `amnesia-bench` from a code root; a revision's code)
    _amnesia_bench,
    code_at,
)

_WALL_VALUE = re.compile(rb'"(wall[A-Za-z_]*)":(-?[0-9][0-9.eE+-]*|null)')


def masked(line: bytes) -> bytes:
    """The log line with the value of every `wall*` key replaced."""
    return _WALL_VALUE.sub(rb'"\1":"<wall>"', line)


def differences(left: Path, right: Path) -> list[str]:
    """What differs between the logs of two run folders (empty: the same logs)."""
    found = []
    left_logs = {p.relative_to(left) for p in (left / "logs").rglob("*.jsonl")}
    right_logs = {p.relative_to(right) for p in (right / "logs").rglob("*.jsonl")}
    found += [f"only in {left}: {p}" for p in sorted(left_logs - right_logs)]
    found += [f"only in {right}: {p}" for p in sorted(right_logs - left_logs)]
    for path in sorted(left_logs & right_logs):
        ours, theirs = (left / path).read_bytes().splitlines(), (right / path).read_bytes().splitlines()
        for number, (a, b) in enumerate(zip(ours, theirs, strict=False), start=1):
            if masked(a) != masked(b):
                found.append(f"{path}:{number}: differs\n  {masked(a)[:300]!r}\n  {masked(b)[:300]!r}")
                break
        else:
            if len(ours) != len(theirs):
                found.append(f"{path}: {len(ours)} lines against {len(theirs)}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="main", help="git revision to compare with (default main)")
    parser.add_argument("--model", default="scripted", help="model of both runs (default scripted)")
    parser.add_argument(
        "--generated-arms",
        default="no-memory,full-memory,amnesia",
        help="arms run on the 900 generated tasks (default no-memory,full-memory,amnesia)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="amnesia-same-logs-") as folder:
        work = Path(folder)
        other = code_at(args.against, work / "other")
        generated = work / "gen900"
        generate = ("generate", "--group", "all", "--n", "300", "--seed", "1", "--out", str(generated))
        _amnesia_bench(ROOT, *generate)
        cases = {
            "generated": (generated, args.generated_arms),
            "shipped": (ROOT / "tasks", "all"),
        }
        problems = []
        for name, (tasks, arms) in cases.items():
            runs = {}
            for side, code in (("other", other), ("this", ROOT)):
                runs[side] = work / f"{name}-{side}"
                quiet = ["--no-progress", "--no-report", "--model", args.model, "--out", str(runs[side])]
                _amnesia_bench(code, "run", "--tasks", str(tasks), "--arms", arms, *quiet)
            found = differences(runs["other"], runs["this"])
            count = len(list((runs["this"] / "logs").rglob("*.jsonl")))
            print(f"{name}: {count} logs, {'the same' if not found else f'{len(found)} differ'}")
            problems += found
        for problem in problems[:20]:
            print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
