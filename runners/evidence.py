"""Evidence retention: for a probe that names its evidence (the source units its answer needs), what became
of the task's writes that carry those units — injected into the prompt at the probe, still stored but not
injected, forgotten, or never stored. It needs no model: it is read off what the arm did.

The same is counted per **evidence id** (a dialog id, the unit published retrieval results count in): an id
is injected when a write carrying it was injected, else stored, forgotten or not stored likewise, and
`no_memory` when no write carries it at all (LoCoMo cites dialog turns no observation was drawn from).

Beside them, `content_tokens`: the tokens of the injected memories' own text at the probe (as each was
written), so that a report can tell the block's line headers ("- [m-0001] fact · written 3d ago · ") from
the memories themselves.

Everything comes through the arm protocol: the memory records an arm logs through `ArmContext.log` while the
runner applies a write (`memory_write`, or `memory_touch` when the arm folds the write into an existing
memory) tie its item ids to that write; `memory_forget` records retire ids; `MemoryContext.items` lists the
ids injected at the probe. The unit is the task's write (a `remember` spec), so every arm is measured
against the same denominator, whatever it stores per write.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from amnesia.tokens import count_tokens
from arms.base import LogFn, MemoryContext
from tasks.logschema import MemoryForget, MemoryTouch, MemoryWrite, Record
from tasks.spec import RememberSpec

STATES = ("injected", "stored", "forgotten", "not_stored")


@dataclass
class _Write:
    refs: frozenset[str]
    items: set[str] = field(default_factory=set)


class EvidenceTracker:
    """Follows the task's writes through an arm's memory events; `state_at_probe` counts a probe's
    evidence."""

    def __init__(self, log: LogFn) -> None:
        self._log = log
        self._writes: list[_Write] = []
        self._current: _Write | None = None
        self._forgotten: set[str] = set()
        self._content_tokens: dict[str, int] = {}  # item id -> tokens of the text it was written with

    def log(self, record: Record) -> None:
        """The arm's log function: forwards every record, noting the memory events it needs."""
        if isinstance(record, MemoryWrite):
            tokens = record.tokens
            self._content_tokens[record.item_id] = count_tokens(record.content) if tokens is None else tokens
        if self._current is not None and isinstance(record, (MemoryWrite, MemoryTouch)):
            self._current.items.add(record.item_id)
            self._forgotten.discard(record.item_id)
        elif isinstance(record, MemoryWrite):
            self._forgotten.discard(record.item_id)
        elif isinstance(record, MemoryForget):
            self._forgotten.add(record.item_id)
        self._log(record)

    @contextmanager
    def writing(self, spec: RememberSpec) -> Iterator[None]:
        """Ties the memory events logged inside the block to `spec` (only specs with `refs` are followed)."""
        if not spec.refs:
            yield
            return
        self._current = _Write(frozenset(spec.refs))
        try:
            yield
        finally:
            self._writes.append(self._current)
            self._current = None

    def state_at_probe(self, evidence: tuple[str, ...], context: MemoryContext) -> dict[str, int]:
        """{memories, injected, stored, forgotten, not_stored}: the task's writes so far that carry any of
        `evidence`, by what became of them (injected beats stored beats forgotten, per write); then the same
        per evidence id: {ids, ids_injected, ids_stored, ids_forgotten, ids_not_stored, ids_no_memory} (an
        id takes the best state of the writes carrying it; `ids_no_memory`: no write carries it)."""
        wanted = set(evidence)
        injected = {str(item.get("id")) for item in context.items}
        counts = dict.fromkeys(("memories", *STATES), 0)
        best = dict.fromkeys(wanted, len(STATES))  # per id, the index in STATES of its best write
        for write in self._writes:
            carried = write.refs & wanted
            if not carried:
                continue
            counts["memories"] += 1
            alive = write.items - self._forgotten
            if write.items & injected:
                state = 0
            elif alive:
                state = 1
            elif write.items:
                state = 2
            else:
                state = 3
            counts[STATES[state]] += 1
            for ref in carried:
                best[ref] = min(best[ref], state)
        counts["content_tokens"] = sum(
            self._content_tokens.get(str(item.get("id")), 0) for item in context.items
        )
        counts["ids"] = len(best)
        for index, state in enumerate((*STATES, "no_memory")):
            counts[f"ids_{state}"] = sum(1 for found in best.values() if found == index)
        return counts
