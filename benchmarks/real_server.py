"""The OpenAI-compatible path against a real server: llama-cpp-python's own server with SmolLM2-135M.

    python benchmarks/real_server.py [--tasks T1.yaml,...] [--connections 1,4] [--out DIR]

Starts `python -m llama_cpp.server` on a free loopback port with the GGUF file that `gguf:smollm2-135m` uses
(temperature 0, seed 0), waits for `GET /v1/models`, then runs the same tasks x 3 arms through
`--model openai:smollm2-135m --base-url ...` once per `--connections` value, with the response cache off so
every call reaches the server. Prints outcomes per arm, throughput per connection count, and how many answers
agree between the runs. Exits 1 if the server does not come up, a pair is unfinished or a call failed.
Answers are compared but a difference does not fail: the server's prompt cache reuses a shared prefix's
KV state, which may change floating-point sums and so, rarely, a greedy token.
Used by scripts/ci_real_model.sh.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from real_model import ARMS, DEFAULT_TASKS, fresh_folder_with_tasks, outcome_table, run_bench

from runners.models.gguf import locate_gguf

SERVED_NAME = "smollm2-135m"
# Three of real_model.py's tasks (EN, ZH, helpful): every connection count re-runs every call.
SERVER_TASKS = (DEFAULT_TASKS[0], DEFAULT_TASKS[3], DEFAULT_TASKS[4])
STARTUP_SECONDS = 180


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(model_file: Path, port: int, log: Path) -> subprocess.Popen:
    """The llama.cpp server in its own process; returns once it answers `GET /v1/models`."""
    command = [
        *(sys.executable, "-m", "llama_cpp.server", "--model", str(model_file)),
        *("--model_alias", SERVED_NAME, "--host", "127.0.0.1", "--port", str(port)),
        *("--n_ctx", "4096", "--n_threads", "2", "--seed", "0", "--verbose", "False"),
    ]
    # As in the in-process adapter: idle OpenMP threads sleep rather than spin against the client.
    env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    server = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"llama_cpp.server exited with {server.returncode}:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as response:
                if response.status == 200:
                    return server
        except OSError:
            time.sleep(0.5)
    server.kill()
    raise SystemExit(f"llama_cpp.server did not answer within {STARTUP_SECONDS}s:\n{log.read_text()[-2000:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(SERVER_TASKS), help="comma-separated paths under tasks/")
    parser.add_argument("--connections", default="1,4", help="comma-separated --max-connections values")
    parser.add_argument("--out", type=Path, default=Path("runs/real-server"))
    args = parser.parse_args()

    out, task_dir = fresh_folder_with_tasks(args.out, args.tasks.split(","))
    model_file, _style = locate_gguf(SERVED_NAME)
    port = free_port()
    server = start_server(model_file, port, out / "server.log")
    env = {**os.environ, "OPENAI_API_KEY": "not-needed"}
    model = f"openai:{SERVED_NAME}"
    try:
        runs = {
            connections: run_bench(
                task_dir,
                model,
                out / f"connections-{connections}",
                env,
                "--base-url",
                f"http://127.0.0.1:{port}/v1",
                "--max-connections",
                connections,
                "--no-cache",
            )
            for connections in args.connections.split(",")
        }
    finally:
        server.terminate()
        server.wait(timeout=30)

    tasks, arms = len(args.tasks.split(",")), len(ARMS.split(","))
    print(f"## {model} on llama_cpp.server, {tasks} tasks x {arms} arms\n")
    print(outcome_table({f"{model}, {c} connection(s)": figures for c, figures in runs.items()}))
    print("\n| connections | model calls | wall s | probes/s |\n|---|---|---|---|")
    for connections, figures in runs.items():
        print(
            f"| {connections} | {figures.calls} | {figures.wall_seconds:.1f} | "
            f"{figures.probes / figures.wall_seconds:.2f} |"
        )
    reference, *others = runs.values()
    for connections, figures in zip(list(runs)[1:], others, strict=True):
        same = sum(reference.answers.get(key) == answer for key, answer in figures.answers.items())
        print(f"\nanswers as in the first run with {connections} connections: {same}/{figures.calls}")
    problems = [f"{c} connection(s): unfinished pairs" for c, figures in runs.items() if figures.unfinished]
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
