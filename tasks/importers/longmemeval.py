"""LongMemEval (Wu et al., ICLR 2025) -> tasks: one task per question (each question has its own history).

Input: one of the dataset's JSON files (`longmemeval_s.json`, `longmemeval_m.json`,
`longmemeval_oracle.json`): a list of instances with `question_id`, `question_type`, `question`, `answer`,
`question_date`, `haystack_session_ids`, `haystack_dates`, `haystack_sessions` (lists of
`{role, content, has_answer?}` turns) and `answer_session_ids`. A `question_id` ending in `_abs` is an
abstention question.

The task (tasks/README.md, "Imported sets"):
- one session per haystack session, at its real dated offset ("2023/05/20 (Sat) 02:21") from the earliest;
- in each, one user turn that writes the session's turns as memories: user turns as kind `fact`, assistant
  turns as kind `episode`, `refs` = [`<session id>`, `<session id>:<turn index>`];
- a last session at `question_date` (never earlier than the last history session) with the probe: the gold
  answer in `answer` and `expect`, the question type as `mechanism`, and as `evidence` the turns marked
  `has_answer` in the answer sessions (the whole answer sessions when none is marked); `_abs` questions
  expect an abstention.
- `knowledge-update` questions become **stale probes**: numbers stated in the evidence turns of the earlier
  answer sessions that the gold answer and the latest answer session do not state are the probe's `stale`
  values (the dataset names the current value only, so only numeric old values are recovered; the
  manifest counts the knowledge-update probes that got stale values).
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from amnesia.durations import format_duration
from tasks.importers.common import (
    ImportInputError,
    WrittenTtlPolicy,
    one_line,
    read_json,
    require,
    source_digest,
    write_import,
)

SOURCE = {
    "dataset": "LongMemEval",
    "origin": "xiaowu0162/LongMemEval (ICLR 2025 release)",
    "license": "MIT (see the dataset's repository)",
    "citation": (
        "Wu, D., Wang, H., Yu, W., Zhang, Y., Chang, K.-W., Yu, D. LongMemEval: Benchmarking Chat Assistants "
        "on Long-Term Interactive Memory. ICLR 2025."
    ),
}
KNOWLEDGE_UPDATE = "knowledge-update"
_DATE = re.compile(r"(\d{4})/(\d{2})/(\d{2})(?:\s*\(\w+\))?\s+(\d{1,2}):(\d{2})")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.:,]\d+)*(?![\w])")
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def parse_date(text: Any, where: str) -> datetime:
    """A LongMemEval date ("2023/05/20 (Sat) 02:21")."""
    match = _DATE.fullmatch(one_line(str(text)))
    if not match:
        raise ImportInputError(f"{where}: expected a date like '2023/05/20 (Sat) 02:21', got {text!r}")
    year, month, day, hour, minute = (int(part) for part in match.groups())
    try:
        return datetime(year, month, day, hour, minute)
    except ValueError as error:
        raise ImportInputError(f"{where}: {error}: {text!r}") from None


def _history(item: dict[str, Any], where: str) -> list[tuple[datetime, str, list[Any]]]:
    ids = require(item, "haystack_session_ids", where, list)
    dates = require(item, "haystack_dates", where, list)
    sessions = require(item, "haystack_sessions", where, list)
    if not (len(ids) == len(dates) == len(sessions)):
        raise ImportInputError(
            f"{where}: haystack_session_ids, haystack_dates and haystack_sessions differ in length "
            f"({len(ids)}, {len(dates)}, {len(sessions)})"
        )
    history = []
    for index, (session_id, date, turns) in enumerate(zip(ids, dates, sessions, strict=True)):
        here = f"{where}: haystack_sessions[{index}]"
        if not isinstance(turns, list):
            raise ImportInputError(f"{here}: expected a list of turns")
        history.append((parse_date(date, f"{where}: haystack_dates[{index}]"), str(session_id), turns))
    history.sort(key=lambda entry: entry[0])  # stable: sessions of equal date keep the dataset's order
    return history


def _turn_ref(session_id: str, index: int) -> str:
    return f"{session_id}:{index}"


def _evidence(item: dict[str, Any], history: list[tuple[datetime, str, list[Any]]]) -> list[str]:
    answer_sessions = {str(s) for s in item.get("answer_session_ids", [])}
    marked = [
        _turn_ref(session_id, index)
        for _, session_id, turns in history
        if session_id in answer_sessions
        for index, turn in enumerate(turns)
        if isinstance(turn, dict) and turn.get("has_answer")
    ]
    return marked or [session_id for _, session_id, _ in history if session_id in answer_sessions]


def _stale_numbers(
    item: dict[str, Any], history: list[tuple[datetime, str, list[Any]]], answer: str
) -> list[str]:
    """Numbers the earlier answer sessions' evidence turns state and the answer and the latest one do not."""
    answer_sessions = [
        entry for entry in history if entry[1] in {str(s) for s in item.get("answer_session_ids", [])}
    ]
    if len(answer_sessions) < 2:
        return []

    def numbers(turns: list[Any]) -> list[str]:
        marked = [t for t in turns if isinstance(t, dict) and t.get("has_answer")] or turns
        text = " ".join(
            str(t.get("content", "")) for t in marked if isinstance(t, dict) and t.get("role") == "user"
        )
        return _NUMBER.findall(text)

    current = set(numbers(answer_sessions[-1][2])) | set(_NUMBER.findall(answer))
    older = [n for _, _, turns in answer_sessions[:-1] for n in numbers(turns)]
    return [n for n in dict.fromkeys(older) if n not in current]


def item_to_task(
    item: Any, index: int, where: str, policy: WrittenTtlPolicy
) -> tuple[dict[str, Any], dict[str, int]]:
    """(the task dict, counts) for one LongMemEval instance."""
    if not isinstance(item, dict):
        raise ImportInputError(f"{where}: expected a LongMemEval instance (a JSON object)")
    question_id = str(require(item, "question_id", where, (str, int)))
    question_type = one_line(require(item, "question_type", where, str))
    question = one_line(require(item, "question", where, str))
    answer = one_line(str(require(item, "answer", where, (str, int, float))))
    history = _history(item, where)
    if not history:
        raise ImportInputError(f"{where}: haystack_sessions: empty history")
    start = history[0][0]
    sessions = []
    memories = 0
    for when, session_id, turns in history:
        remember = []
        for turn_index, turn in enumerate(turns):
            if not isinstance(turn, dict) or not one_line(str(turn.get("content", ""))):
                continue
            kind = "fact" if turn.get("role") == "user" else "episode"
            spec: dict[str, Any] = {"content": one_line(turn["content"]), "kind": kind}
            ttl = policy.ttl_for(kind)
            if ttl is not None:
                spec["ttl"] = ttl
            spec["refs"] = [session_id, _turn_ref(session_id, turn_index)]
            remember.append(spec)
        memories += len(remember)
        user_turn: dict[str, Any] = {"user": f"[{when:%Y-%m-%d %H:%M}] Chat session {session_id}."}
        if remember:
            user_turn["remember"] = remember
        sessions.append({"at": format_duration((when - start).total_seconds()), "turns": [user_turn]})
    asked = max(
        parse_date(require(item, "question_date", where, str), f"{where}: question_date"), history[-1][0]
    )
    abstain = question_id.endswith("_abs")
    probe: dict[str, Any] = {"mechanism": question_type + ("+abstention" if abstain else "")}
    stale = []
    if abstain:
        probe["abstain"] = True
    else:
        probe["expect"] = [answer]
        probe["answer"] = answer
        if question_type == KNOWLEDGE_UPDATE:
            stale = [n for n in _stale_numbers(item, history, answer) if n.casefold() != answer.casefold()]
            if stale:
                probe["stale"] = stale
    evidence = _evidence(item, history)
    if evidence:
        probe["evidence"] = evidence
    sessions.append(
        {
            "at": format_duration((asked - start).total_seconds()),
            "turns": [{"user": question, "probe": probe}],
        }
    )
    safe_id = _ID_UNSAFE.sub("-", question_id)
    task = {
        "id": f"longmemeval/{safe_id}",
        "group": "harmful" if question_type == KNOWLEDGE_UPDATE else "helpful",
        "category": f"longmemeval-{question_type}",
        "description": (
            f"LongMemEval question {question_id} ({question_type}): {len(history)} dated chat sessions "
            "written as memories, then the question."
        ),
        "lang": "en",
        "origin": {"dataset": "longmemeval", "item": question_id, "ttl_policy": policy.spec},
        "sessions": sessions,
    }
    counts = {
        "memories": memories,
        "knowledge_update": int(question_type == KNOWLEDGE_UPDATE and not abstain),
        "stale_probes": int(bool(stale)),
    }
    return task, counts


def import_longmemeval(
    path: Path,
    out: Path,
    policy: WrittenTtlPolicy,
    question_types: tuple[str, ...] = (),
    limit: int | None = None,
) -> tuple[Path, dict[str, int]]:
    """Convert a LongMemEval file at `path` into a task set at `out`; returns (manifest path, totals).
    `question_types` keeps only those types (empty = all); `limit` keeps the first N questions kept."""
    if not path.is_file():
        raise ImportInputError(f"{path}: expected a LongMemEval JSON file")
    document = read_json(path)
    if not isinstance(document, list):
        raise ImportInputError(f"{path}: expected a list of LongMemEval instances")
    files: dict[str, list[dict[str, Any]]] = {}
    totals = {"tasks": 0, "memories": 0, "knowledge_update": 0, "stale_probes": 0}
    for index, item in enumerate(document):
        if question_types and isinstance(item, dict) and item.get("question_type") not in question_types:
            continue
        if limit is not None and totals["tasks"] >= limit:
            break
        task, counts = item_to_task(item, index, f"{path}[{index}]", policy)
        relpath = f"{task['id']}.yaml"
        if relpath in files:
            raise ImportInputError(f"{path}[{index}]: question_id: {task['origin']['item']!r} appears twice")
        files[relpath] = [task]
        totals["tasks"] += 1
        for name, value in counts.items():
            totals[name] += value
    if not files:
        raise ImportInputError(f"{path}: no question to import (question types: {', '.join(question_types)})")
    manifest = {
        "importer": "tasks.importers.longmemeval",
        "source": {**SOURCE, "input": [path.name], "input_sha256": source_digest([path])},
        "options": {"ttl_policy": policy.spec, "question_types": list(question_types), "limit": limit},
        "totals": totals,
    }
    return write_import(files, out, manifest), totals
