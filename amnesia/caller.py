"""Who is calling: the one scope wall every surface applies (seed §6.10).

An agent may audit, restore and forget only what it could recall. The main agent outside any session sees the
workspace; inside a session it also sees that session's memories; a sub-agent sees only its own session's; a
team agent (teammate) sees its own session's and its team's, which every member of that team shares. The
wall is by scope and owner together: a session and a team that happen to share a name see nothing of each
other. Recall, preview and injection read the same fields (`owner_id`, `include_workspace`, `team_id`); a
`Caller` carries them to `Amnesia.forget`, `audit`, `restore` and `status`, where None means the store's
operator (the CLI, the Python API): everything.
"""

from __future__ import annotations

from dataclasses import dataclass

from amnesia.errors import InvalidInput

WORKSPACE = "workspace"
SESSION = "session"
TEAM = "team"


@dataclass(frozen=True)
class Caller:
    """An agent's view of one workspace."""

    owner_id: str | None = None  # the agent's session (None: the main agent outside any session)
    include_workspace: bool = True  # False: a sub-agent or a teammate, which does not see the workspace
    team_id: str | None = None  # the team whose shared memories this agent sees (None: in no team)

    def __post_init__(self) -> None:
        if not self.include_workspace and self.owner_id is None:
            raise InvalidInput("owner_id: a sub-agent needs its own session id")
        if self.team_id is not None and (not isinstance(self.team_id, str) or not self.team_id.strip()):
            raise InvalidInput(f"team_id: expected a non-empty string or None, got {self.team_id!r}")

    def sees(self, scope: str, owner_id: str | None) -> bool:
        """True when a memory of this scope and owner is one this caller could recall."""
        if scope == WORKSPACE:
            return self.include_workspace
        if scope == TEAM:
            return self.team_id is not None and owner_id == self.team_id
        return self.owner_id is not None and owner_id == self.owner_id
