"""Who is calling: the one scope wall every surface applies (seed §6.10).

An agent may audit, restore and forget only what it could recall. The main agent outside any session sees the
workspace; inside a session it also sees that session's memories; a sub-agent sees only its own session's.
Recall, preview and injection already read the same two fields (`owner_id`, `include_workspace`); a `Caller`
carries them to `Amnesia.forget`, `audit`, `restore` and `status`, where None means the store's operator (the
CLI, the Python API): everything.
"""

from __future__ import annotations

from dataclasses import dataclass

from amnesia.errors import InvalidInput

WORKSPACE = "workspace"


@dataclass(frozen=True)
class Caller:
    """An agent's view of one workspace."""

    owner_id: str | None = None  # the agent's session (None: the main agent outside any session)
    include_workspace: bool = True  # False: a sub-agent, which sees only its own session's memories

    def __post_init__(self) -> None:
        if not self.include_workspace and self.owner_id is None:
            raise InvalidInput("owner_id: a sub-agent needs its own session id")

    def sees(self, scope: str, owner_id: str | None) -> bool:
        """True when a memory of this scope and owner is one this caller could recall."""
        if scope == WORKSPACE:
            return self.include_workspace
        return self.owner_id is not None and owner_id == self.owner_id
