"""Our MCP server measured by a peer harness nobody here wrote: benchd-harness's generic MCP adapter (a plain
JSON-RPC-over-HTTP client: no `initialize`, no event stream) against `dsh-memory-forget mcp --http
--stateless`, on benchd's own benchmarks, beside benchd's `null` and `echo` adapters as its reference points.

    pip install 'dsh-memory-forget[interop]'      # benchd-harness (click, pynacl, requests)
    python benchmarks/benchd_interop.py            # smoke-memory-v0 and reliability-v1

Each benchmark gets a fresh in-memory server on a free loopback port. The adapter is told which tools to use
(`amnesia_remember` to ingest, `amnesia_recall` to query): its name matching would take `amnesia_forget` as a
query tool ("for-get"). Scores are benchd's deterministic ones (its LLM judge needs an API key; items it
leaves "pending" are not scored). Prints one row per (benchmark, system): verified score, passed, failed,
pending, and exits 1 if a run does not complete.
"""

from __future__ import annotations

import argparse
import json
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

BENCHMARKS = ("smoke-memory-v0", "reliability-v1")
DEADLINE = 60.0  # seconds for the server to announce its address


def start_server(folder: Path) -> tuple[subprocess.Popen[str], str]:
    """A fresh in-memory `dsh-memory-forget mcp --http --stateless` on a free port, and its URL."""
    command = [
        sys.executable,
        "-m",
        "amnesia.cli",
        "mcp",
        "--in-memory",
        "--http",
        "--stateless",
        "--port",
        "0",
    ]
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=folder)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in server.stderr or ()], daemon=True).start()
    announced = lines.get(timeout=DEADLINE)
    if " serving streamable HTTP at " not in announced:
        server.terminate()
        raise RuntimeError(f"the server did not start: {announced.strip()}")
    return server, announced.rsplit(" ", 1)[1].strip()


def run_benchd(benchd: str, adapter: str, benchmark: str, out: Path, config: dict[str, str] | None) -> dict:
    """One `benchd run`: its verified score and counts, read from what it prints."""
    command = [benchd, "run", "-a", adapter, "-b", benchmark, "-o", str(out)]
    if config is not None:
        command += ["--adapter-config", json.dumps(config)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    text = done.stdout + done.stderr
    score = re.search(r"Verified Score:\s+([\d.]+) / 100", text)
    counts = re.search(r"Passed: (\d+)\s+Failed: (\d+)\s+Pending: (\d+)", text)
    if done.returncode != 0 or score is None or counts is None:
        raise RuntimeError(f"benchd run -a {adapter} -b {benchmark} did not complete:\n{text[-2000:]}")
    passed, failed, pending = map(int, counts.groups())
    return {"score": float(score.group(1)), "passed": passed, "failed": failed, "pending": pending}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", action="append", choices=BENCHMARKS, help="default: both")
    args = parser.parse_args()
    benchd = shutil.which("benchd")
    if benchd is None:
        print("benchd not found: pip install 'dsh-memory-forget[interop]'", file=sys.stderr)
        return 1
    print("| benchmark | system | verified score | passed | failed | pending |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="benchd-") as scratch:
        folder = Path(scratch)
        for benchmark in args.benchmark or BENCHMARKS:
            server, url = start_server(folder)
            try:
                tools = {"endpoint": url, "ingest_tool": "amnesia_remember", "query_tool": "amnesia_recall"}
                rows = {"amnesia (mcp)": run_benchd(benchd, "mcp", benchmark, folder / "mcp", tools)}
            finally:
                server.terminate()
                server.wait(timeout=DEADLINE)
            for reference in ("null", "echo"):
                rows[f"benchd {reference}"] = run_benchd(
                    benchd, reference, benchmark, folder / reference, None
                )
            for system, row in rows.items():
                cells = [f"{row['score']:.1f}", str(row["passed"]), str(row["failed"]), str(row["pending"])]
                print(f"| {benchmark} | {system} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
