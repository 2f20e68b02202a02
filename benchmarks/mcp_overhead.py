"""Per-pair overhead of the external `mcp-memory` arm against the in-process arms, measured in the same run.

    python benchmarks/mcp_overhead.py                 # all shipped tasks (helpful, harmful, mixed)
    python benchmarks/mcp_overhead.py --limit 12      # a balanced sample

Installs the official npm server-memory into a temporary prefix (`npm install`), then runs one
`amnesia-bench run` with four arms on the same tasks and the scripted model: `full-memory` and `amnesia`
(in process), `mcp-server-memory` (`mcp-memory`, profile server-memory) and `mcp-amnesia` (`mcp-memory`,
profile amnesia: our own server, one process per caller). Prints each arm's mean wall seconds per pair (from
each pair's `task_end.wall_seconds`: process starts, round trips and the replay itself) and its ratio to the
in-process arm it stands for (server-memory keeps everything, like full-memory), plus the run's total time.
Nothing is timed in a unit test; the ratios are same-run figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "@modelcontextprotocol/server-memory"
# arm -> the in-process arm it is compared with
PAIRED = {"mcp-server-memory": "full-memory", "mcp-amnesia": "amnesia"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="a balanced sample of N tasks (default: all)")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        subprocess.run(
            ["npm", "install", "--prefix", str(work / "npm"), "--no-audit", "--no-fund", PACKAGE],
            check=True,
            capture_output=True,
        )
        server = work / "npm" / "node_modules" / ".bin" / "mcp-server-memory"
        config = work / "arms.yaml"
        config.write_text(
            json.dumps(
                {
                    "mcp-server-memory": {"base": "mcp-memory", "options": {"command": str(server)}},
                    "mcp-amnesia": {"base": "mcp-memory", "options": {"profile": "amnesia"}},
                }
            )
        )
        command = [sys.executable, "-m", "amnesia_bench.cli", "run", "--arm-config", str(config)]
        command += ["--arms", "full-memory,amnesia,mcp-server-memory,mcp-amnesia", "--out", str(work / "run")]
        command += ["--group", "helpful,harmful,mixed", "--workers", str(args.workers)]
        command += ["--no-report", "--no-progress", *(["--limit", str(args.limit)] if args.limit else [])]
        started = time.perf_counter()
        subprocess.run(command, check=True, cwd=ROOT)
        total = time.perf_counter() - started
        seconds: dict[str, list[float]] = defaultdict(list)
        for log in sorted((work / "run" / "logs").glob("*/*.jsonl")):
            last = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])
            if last["type"] == "task_end":
                seconds[log.parent.name].append(last["wall_seconds"])
    print(f"{'arm':<20} {'pairs':>5} {'s/pair':>8} {'x in-process':>13}")
    for arm in ("full-memory", "amnesia", *PAIRED):
        mean = statistics.fmean(seconds[arm]) if seconds[arm] else float("nan")
        base = PAIRED.get(arm)
        ratio = f"{mean / statistics.fmean(seconds[base]):.0f}x" if base and seconds[base] else ""
        print(f"{arm:<20} {len(seconds[arm]):>5} {mean:>8.3f} {ratio:>13}")
    print(f"whole run (4 arms, {args.workers} worker(s)): {total:.1f} s")


if __name__ == "__main__":
    main()
