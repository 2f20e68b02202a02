"""LoCoMo (Maharana et al., ACL 2024) -> tasks: one task per conversation.

Input: a folder of per-conversation JSON files (each a sample: `speaker_a`, `speaker_b`, `session_N`,
`session_N_date_time`, `session_N_observation`, `qa`, ...), one such file, or the original release's single
`locomo10.json` (a list of samples whose dialog sits under `conversation` and whose observations sit under
`observation`). The dataset's fields are described in its SOURCE.md.

The task (documented in tasks/README.md, "Imported sets"):
- one session per dated dialog session, at its real offset from the first session
  (`session_N_date_time`, e.g. "1:56 pm on 8 May, 2023"); sessions without turns are skipped;
- in each, one user turn that announces the session and writes that session's **observations** (LoCoMo's own
  per-session memory units, each pointing at the dialog ids it came from) as memories, `refs` = those ids,
  kind `fact`, ttl from the written-ttl policy;
- then, `ask_after` after the last dialog session, one session per `qa` item (so no question sits in the
  history of the next) with one probe: the question as the user turn, the gold answer in `answer` and in
  `expect` (value matching), the `evidence` dialog ids, and the category as `mechanism` (1 multi-hop,
  2 temporal, 3 open-domain, 4 single-hop, 5 adversarial). Category 5 questions ask about something the
  conversation never said: `abstain: true`.

Evidence ids are normalised (`D:11:26` -> `D11:26`; several ids in one string are split); ids that do not
look like `D<session>:<turn>` are dropped, and the manifest counts them.
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
    json_files,
    one_line,
    read_json,
    require,
    source_digest,
    write_import,
)

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ADVERSARIAL = 5
SOURCE = {
    "dataset": "LoCoMo",
    "origin": "snap-research/locomo, data/locomo10.json (ACL 2024 release)",
    "license": "research use; cite the paper (see the dataset's repository)",
    "citation": (
        "Maharana, A., Lee, D.-H., Tulyakov, S., Bansal, M., Barbieri, F., Fang, Y. Evaluating Very "
        "Long-Term Conversational Memory of LLM Agents. ACL 2024."
    ),
}
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"
_SESSION_KEY = re.compile(r"session_(\d+)")
_DIALOG_ID = re.compile(r"D:?(\d+):(\d+)")


def load_samples(path: Path) -> tuple[list[tuple[str, dict[str, Any]]], list[Path]]:
    """([(sample id, flattened sample)], input files) from a folder, a file, or the list-of-samples file."""
    files = json_files(path)
    samples: list[tuple[str, dict[str, Any]]] = []
    for file in files:
        document = read_json(file)
        items = document if isinstance(document, list) else [document]
        for index, item in enumerate(items):
            where = f"{file}[{index}]" if isinstance(document, list) else str(file)
            if not isinstance(item, dict):
                raise ImportInputError(f"{where}: expected a LoCoMo sample (a JSON object)")
            flat = {**item, **item.get("conversation", {}), **item.get("observation", {})}
            default_id = f"conv-{file.stem}" if not isinstance(document, list) else f"conv-{index}"
            sample_id = str(flat.get("sample_id") or default_id)
            samples.append((sample_id, {**flat, "_where": where}))
    seen: set[str] = set()
    for sample_id, sample in samples:
        if sample_id in seen:
            raise ImportInputError(f"{sample['_where']}: sample_id: {sample_id!r} appears twice")
        seen.add(sample_id)
    return samples, files


def parse_date(text: str, where: str) -> datetime:
    """A LoCoMo session date ("1:56 pm on 8 May, 2023")."""
    try:
        return datetime.strptime(one_line(text), _DATE_FORMAT)
    except ValueError:
        raise ImportInputError(
            f"{where}: expected a date like '1:56 pm on 8 May, 2023', got {text!r}"
        ) from None


def evidence_ids(raw: Any) -> tuple[list[str], int]:
    """(normalised dialog ids, how many entries were dropped as malformed)."""
    found: list[str] = []
    dropped = 0
    for entry in raw if isinstance(raw, list) else [raw]:
        parts = [part for part in re.split(r"[;,\s]+", str(entry)) if part]
        for part in parts or [""]:
            match = _DIALOG_ID.fullmatch(part)
            if match:
                found.append(f"D{match.group(1)}:{match.group(2)}")
            else:
                dropped += 1
    return list(dict.fromkeys(found)), dropped


def _observations(sample: dict[str, Any], number: int, where: str) -> list[tuple[str, list[str]]]:
    """(text, dialog ids) of one session's observations, speakers in the file's order."""
    raw = sample.get(f"session_{number}_observation", {})
    if not isinstance(raw, dict):
        raise ImportInputError(f"{where}: session_{number}_observation: expected an object of speakers")
    found = []
    for speaker, lines in raw.items():
        for index, line in enumerate(lines if isinstance(lines, list) else []):
            if not (isinstance(line, list) and len(line) == 2 and isinstance(line[0], str)):
                raise ImportInputError(
                    f"{where}: session_{number}_observation.{speaker}[{index}]: expected [text, dialog id(s)]"
                )
            refs, _ = evidence_ids(line[1])
            if one_line(line[0]):
                found.append((one_line(line[0]), refs))
    return found


def sample_to_task(
    sample_id: str, sample: dict[str, Any], policy: WrittenTtlPolicy, ask_after: float
) -> tuple[dict[str, Any], dict[str, int]]:
    """(the task dict, counts: sessions, memories, probes, dropped evidence ids)."""
    where = sample["_where"]
    speaker_a = one_line(require(sample, "speaker_a", where, str))
    speaker_b = one_line(require(sample, "speaker_b", where, str))
    numbers = sorted(
        int(match.group(1))
        for key in sample
        if (match := _SESSION_KEY.fullmatch(key)) and isinstance(sample[key], list) and sample[key]
    )
    if not numbers:
        raise ImportInputError(f"{where}: no session_N dialog with turns")
    dated = [
        (
            parse_date(
                require(sample, f"session_{n}_date_time", where, str), f"{where}: session_{n}_date_time"
            ),
            n,
        )
        for n in numbers
    ]
    dated.sort()  # the dataset's dates are increasing; sorting keeps offsets non-decreasing if one is not
    start = dated[0][0]
    sessions: list[dict[str, Any]] = []
    memories = 0
    for when, number in dated:
        remember = []
        for text, refs in _observations(sample, number, where):
            spec: dict[str, Any] = {"content": text, "kind": "fact"}
            ttl = policy.ttl_for("fact")
            if ttl is not None:
                spec["ttl"] = ttl
            if refs:
                spec["refs"] = refs
            remember.append(spec)
        memories += len(remember)
        turn: dict[str, Any] = {
            "user": (
                f"[{when:%d %B %Y, %H:%M}] Session {number} of the conversation between {speaker_a} and "
                f"{speaker_b} ({len(sample[f'session_{number}'])} dialog turns)."
            )
        }
        if remember:
            turn["remember"] = remember
        sessions.append({"at": format_duration((when - start).total_seconds()), "turns": [turn]})
    probes, dropped = _probe_turns(require(sample, "qa", where, list), where)
    if not probes:
        raise ImportInputError(f"{where}: qa: no question to ask")
    # Each question in a session of its own (all at the same time), so no question or earlier answer sits
    # in the conversation history of the next: what a question can draw on is the arm's memory alone.
    asked = format_duration((dated[-1][0] - start).total_seconds() + ask_after)
    sessions.extend({"at": asked, "turns": [probe]} for probe in probes)
    task = {
        "id": f"locomo/{sample_id}",
        "group": "helpful",
        "category": "locomo",
        "description": (
            f"LoCoMo conversation {sample_id} between {speaker_a} and {speaker_b}: {len(dated)} dated "
            f"sessions whose observations are written as memories, then {len(probes)} questions."
        ),
        "lang": "en",
        "origin": {"dataset": "locomo", "item": sample_id, "ttl_policy": policy.spec},
        "sessions": sessions,
    }
    counts = {
        "sessions": len(dated),
        "memories": memories,
        "probes": len(probes),
        "evidence_dropped": dropped,
    }
    return task, counts


def _probe_turns(qa: list[Any], where: str) -> tuple[list[dict[str, Any]], int]:
    turns = []
    dropped = 0
    for index, item in enumerate(qa):
        here = f"{where}: qa[{index}]"
        question = one_line(require(item, "question", here, str))
        category = require(item, "category", here, int)
        if category not in CATEGORIES:
            raise ImportInputError(f"{here}: category: expected 1-5, got {category!r}")
        ids, bad = evidence_ids(item.get("evidence", []))
        dropped += bad
        probe: dict[str, Any] = {"mechanism": CATEGORIES[category]}
        if category == ADVERSARIAL:
            probe["abstain"] = True
        else:
            answer = item.get("answer")
            if answer is None or not one_line(str(answer)):
                raise ImportInputError(f"{here}: answer: missing")
            probe["expect"] = [one_line(str(answer))]
            probe["answer"] = one_line(str(answer))
        if ids:
            probe["evidence"] = ids
        turns.append({"user": question, "probe": probe})
    return turns, dropped


def import_locomo(
    path: Path, out: Path, policy: WrittenTtlPolicy, ask_after: float = 0.0, limit: int | None = None
) -> tuple[Path, dict[str, int]]:
    """Convert LoCoMo at `path` into a task set at `out`; returns (manifest path, totals)."""
    samples, files = load_samples(path)
    samples.sort(key=lambda item: item[0])
    if limit is not None:
        samples = samples[:limit]
    tasks_by_file: dict[str, list[dict[str, Any]]] = {}
    totals = {"tasks": 0, "sessions": 0, "memories": 0, "probes": 0, "evidence_dropped": 0}
    for sample_id, sample in samples:
        task, counts = sample_to_task(sample_id, sample, policy, ask_after)
        tasks_by_file[f"locomo/{sample_id}.yaml"] = [task]
        totals["tasks"] += 1
        for name, value in counts.items():
            totals[name] += value
    manifest = {
        "importer": "tasks.importers.locomo",
        "source": {**SOURCE, "input": [file.name for file in files], "input_sha256": source_digest(files)},
        "options": {"ttl_policy": policy.spec, "ask_after": format_duration(ask_after), "limit": limit},
        "totals": totals,
    }
    return write_import(tasks_by_file, out, manifest), totals
