"""An agent loop on an OpenAI-compatible chat endpoint, with Amnesia as its memory (amnesia.host).

Any server that speaks chat completions works: llama.cpp's server, vLLM, Ollama, a hosted API.

Each user turn: the memory block goes into the system prompt (`before_step`), the model may call the seven
`amnesia_*` tools (`call_tool`), its answer is reported back (`after_step`, renewal per renew_on_inject), and
the turn ends with a sweep (`end_turn`). Turns share no chat history: what carries over from one turn to the
next is exactly what the memory kept. `--subtask TEXT` runs one more step in a sub-agent whose session
memories are disposed when it ends.

    python examples/host_loop_openai.py --base-url http://127.0.0.1:8080/v1 --model local \\
        "Remember for a week that the staging database is db-stage-3." "Which staging database do we use?"

Base URL, model and key default to $OPENAI_BASE_URL, $OPENAI_MODEL and $OPENAI_API_KEY. The store is in
memory unless --db names a SQLite file; the config comes from $AMNESIA_CONFIG / AMNESIA_* as for the CLI.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import httpx

from amnesia import Amnesia, Config, InMemoryStore, SQLiteStore
from amnesia.errors import AmnesiaError, one_line
from amnesia.host import AgentSession

SYSTEM_PROMPT = (
    "You are a helpful assistant with a memory that forgets. Use the amnesia_* tools only when the user asks "
    "you to remember or forget something, and always give a ttl. What you remember is listed below."
)
MAX_TOOL_ROUNDS = 4  # model calls per step that may use tools; the last call of a step offers none


def chat(
    client: httpx.Client, model: str, messages: list[dict[str, Any]], offer_tools: bool
) -> dict[str, Any]:
    """One chat-completions call; the assistant message of the first choice."""
    body: dict[str, Any] = {"model": model, "messages": messages, "temperature": 0}
    if offer_tools:
        body["tools"] = AgentSession.tools
    response = client.post("/chat/completions", json=body)
    response.raise_for_status()
    return response.json()["choices"][0]["message"]


def step(agent: AgentSession, client: httpx.Client, model: str, user_text: str) -> str:
    """One model step of `agent` on `user_text`, with its memory block and its tools; returns the answer."""
    block = agent.before_step(query=user_text)
    system = SYSTEM_PROMPT + (f"\n\n{block}" if block else "\n\n(No memories.)")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": user_text},
    ]
    for round_number in range(MAX_TOOL_ROUNDS + 1):
        reply = chat(client, model, messages, offer_tools=round_number < MAX_TOOL_ROUNDS)
        calls = reply.get("tool_calls") or []
        if not calls:
            break
        messages.append({"role": "assistant", "content": reply.get("content"), "tool_calls": calls})
        for call in calls:
            result = agent.call_tool(call["function"]["name"], call["function"].get("arguments"))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    answer = reply.get("content") or ""
    agent.after_step(answer)
    return answer


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("turns", nargs="+", metavar="TURN", help="User messages, one model step each.")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"))
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL"), help="Model name ($OPENAI_MODEL).")
    parser.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY"), help="Bearer key, if any.")
    parser.add_argument("--db", help="SQLite store (default: in memory, gone at exit).")
    parser.add_argument("--subtask", help="One more step, run by a sub-agent with its own session.")
    parser.add_argument("--timeout", type=float, default=120.0, help="Seconds per model call.")
    args = parser.parse_args(argv)
    if not args.model:
        parser.error("--model: required (or set OPENAI_MODEL)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    headers = {"authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    try:
        config = Config.load()
        store = SQLiteStore(args.db, lock_timeout=config.lock_timeout) if args.db else InMemoryStore()
    except AmnesiaError as error:
        print(f"error: {one_line(error)}", file=sys.stderr)
        return 2
    engine = Amnesia(store=store, config=config)
    try:
        with (
            httpx.Client(base_url=args.base_url, headers=headers, timeout=args.timeout) as client,
            AgentSession(engine) as agent,
        ):
            for user_text in args.turns:
                print(f"user: {user_text}\nassistant: {step(agent, client, args.model, user_text)}")
                agent.end_turn()
            if args.subtask:
                with agent.subagent("subtask-1") as sub:
                    print(
                        f"subtask: {args.subtask}\nsub-agent: {step(sub, client, args.model, args.subtask)}"
                    )
                agent.end_turn()
        print("memory: " + json.dumps(engine.status().counts))
    except AmnesiaError as error:  # e.g. the SQLite store stayed locked by another process
        print(f"error: {one_line(error)}", file=sys.stderr)
        return 2
    except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as error:
        # The endpoint failed or answered something that is not a chat completion.
        print(f"error: {args.base_url}: {type(error).__name__}: {one_line(error)}", file=sys.stderr)
        return 1
    finally:
        engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
