#!/usr/bin/env bash
# The end-to-end check of the `mcp-memory` arm (issue 33), called by .ci/run: install the official npm
# server-memory into a temporary prefix, run a short task sample through it beside full-memory, then the same
# sample through our own MCP server (profile amnesia) beside the in-process amnesia arm, with every shipped task
# that has an untrusted write (`source: auto`, whose trust must cross the wire) or a team agent (whose team's
# memories must reach its teammates through their own servers, `mcp --team`), and check that every pair
# finished, that the wire was logged, and that amnesia over MCP classified every probe as in process.
# Exits non-zero on any failure; everything is written to a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

npm install --prefix "$out/npm" --no-audit --no-fund @modelcontextprotocol/server-memory >/dev/null
server="$out/npm/node_modules/.bin/mcp-server-memory"
# A minute for a server to start: on a loaded CI machine Python's start alone took over the 10 s default, and
# this check is about what crosses the wire, not about timeouts (tests/arms/test_mcp_memory.py has those).
sample=(--limit 8 --no-progress --no-report --set mcp-memory.timeout=60)
amnesia-bench run "${sample[@]}" --group helpful,harmful --arms mcp-memory,full-memory --set "mcp-memory.command=$server" --out "$out/npm-run"
amnesia-bench run "${sample[@]}" --group helpful,harmful,mixed --arms mcp-memory,amnesia \
    --set mcp-memory.profile=amnesia --out "$out/amnesia-run"
untrusted=()
for file in $(grep -lE "source: auto|agent: team" tasks/helpful/*.yaml tasks/harmful/*.yaml tasks/mixed/*.yaml); do
    group="$(basename "$(dirname "$file")")"
    untrusted+=(--task-id "$group/$(basename "$file" .yaml)")
done
amnesia-bench run --no-progress --no-report --set mcp-memory.timeout=60 "${untrusted[@]}" --arms mcp-memory,amnesia \
    --set mcp-memory.profile=amnesia --out "$out/untrusted-run"
python - "$out" <<'PY'
import json
import sys
from pathlib import Path

out = Path(sys.argv[1])


def records(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


for run in ("npm-run", "amnesia-run", "untrusted-run"):
    logs = sorted((out / run / "logs" / "mcp-memory").glob("*.jsonl"))
    if not logs:
        sys.exit(f"ci_mcp_memory: {run} wrote no mcp-memory logs")
    for log in logs:
        lines = records(log)
        if lines[-1]["type"] != "task_end" or not any(r["type"] == "arm_call" for r in lines):
            sys.exit(f"ci_mcp_memory: {run}/{log.name} is unfinished or logged no arm_call")
differ, probes = [], 0
for run in ("amnesia-run", "untrusted-run"):
    for log in sorted((out / run / "logs" / "mcp-memory").glob("*.jsonl")):
        mine = [r["classification"] for r in records(log) if r["type"] == "probe"]
        theirs = [r["classification"] for r in records(log.parent.parent / "amnesia" / log.name) if r["type"] == "probe"]
        probes += len(mine)
        differ += [f"{log.stem}: {a} over MCP, {b} in process" for a, b in zip(mine, theirs, strict=True) if a != b]
if differ:
    sys.exit(f"ci_mcp_memory: amnesia over MCP classified {len(differ)} of {probes} probes differently: {differ}")
print(f"ci_mcp_memory: server-memory and amnesia over MCP ran the sample; all {probes} probes as in process")
PY
