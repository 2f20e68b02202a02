"""The host loop for Python agent code: the seed 000 lifecycle (§5.1, §6.4, §6.5, §6.10) as a context manager.

```python
with AgentSession(engine) as agent:                  # the main agent: plugged onto the memory bus
    with agent.subagent("s1") as sub:                # a sub-agent: its own session, disposed on exit
        block = sub.before_step(query=user_text)     # the memory block for this model step's system prompt
        answer = ...                                 # call the model; route its tool calls to sub.call_tool
        sub.after_step(answer)                       # report_answer: renewal per renew_on_inject
    with agent.team("t1") as team:                   # a team of the main agent's (seed §6.10)
        with team.member("alice") as alice:          # a team agent: its session plus the team's memories
            alice.call_tool("amnesia_remember", {"content": "...", "ttl": "1d"})  # scope team by default
        with team.member("bob") as bob:              # bob sees what alice left to the team
            ...
    agent.end_turn()                                 # the turn-end sweep
```

Leaving an agent's `with` block (also on an exception) is the seed's `agent/disposed`: its sub-agents and
teams that are still open are disposed first, then the agent's own session memories are unplugged
(`end_agent`, audited `agent-disposed`) unless promoted. The main agent outside any session (owner_id=None)
owns no session memories, so its exit forgets nothing. A team agent (teammate) sees its own session's
memories and its team's, not the workspace; it writes to the team by default. A member leaving unplugs its
session memories only: the team's memories stay for the other members until the team itself is disposed
(its `with` block, or its lead ending), which unplugs them (`end_team`, audited `agent-disposed`) unless
promoted. The host drives the clock: the engine's own clock decides expiry.
"""

from __future__ import annotations

from typing import Any

from amnesia.caller import Caller
from amnesia.engine import Amnesia
from amnesia.errors import InvalidInput
from amnesia.tools import TOOLS, dispatch
from amnesia.views import ForgetSummary, Injection, SweepResult


def inject(
    engine: Amnesia,
    budget_tokens: int | None = None,
    *,
    query: str | None = None,
    owner_id: str | None = None,
    include_workspace: bool = True,
    team_id: str | None = None,
) -> Injection:
    """`engine.select_for_injection` for a host: the block for one model step. `query` (the user's
    current text) ranks the block when the engine's `injection_order` is "relevance"; the strength order
    ignores it."""
    return engine.select_for_injection(
        budget_tokens, owner_id=owner_id, include_workspace=include_workspace, query=query, team_id=team_id
    )


class AgentSession:
    """One agent's life on the memory bus: inject before each model step, report the answer after it, sweep
    at turn end, dispose its session memories (and its open sub-agents) when it ends.

    `owner_id` is the agent's session id (None: the main agent outside any session); `include_workspace`
    False makes it a sub-agent, which sees and writes only its own session memories (seed §6.10); with a
    `team_id` as well, a team agent, which also sees its team's memories (`Team.member` makes one).
    `budget_tokens` is the default injection budget (None: the engine's `max_injected_tokens`).
    """

    tools = TOOLS  # the seven amnesia_* tool definitions to pass as `tools=` to a chat-completions call

    def __init__(
        self,
        engine: Amnesia,
        owner_id: str | None = None,
        *,
        include_workspace: bool = True,
        budget_tokens: int | None = None,
        team_id: str | None = None,
    ) -> None:
        if owner_id is not None and (not isinstance(owner_id, str) or not owner_id.strip()):
            raise InvalidInput(f"owner_id: expected a non-empty string or None, got {owner_id!r}")
        self.caller = Caller(owner_id, include_workspace, team_id)  # refuses a sub-agent without a session
        self.engine = engine
        self.owner_id = owner_id
        self.include_workspace = include_workspace
        self.team_id = team_id
        self.budget_tokens = budget_tokens
        self.ended = False
        self._subagents: dict[str, AgentSession] = {}
        self._teams: dict[str, Team] = {}
        self._injection: Injection | None = None
        self._question: str | None = None

    def __enter__(self) -> AgentSession:
        self._check_open("enter")
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.end()

    @property
    def is_subagent(self) -> bool:
        """True for a sub-agent: it sees only its own session memories."""
        return not self.include_workspace and self.team_id is None

    @property
    def is_team_agent(self) -> bool:
        """True for a team agent: it sees its own session memories and its team's."""
        return self.team_id is not None

    def subagent(self, owner_id: str, *, budget_tokens: int | None = None) -> AgentSession:
        """A sub-agent with its own session `owner_id`; disposed when its `with` block or this agent ends."""
        self._check_open("subagent")
        self._check_free(owner_id)
        child = AgentSession(
            self.engine,
            owner_id,
            include_workspace=False,
            budget_tokens=self.budget_tokens if budget_tokens is None else budget_tokens,
        )
        self._subagents[owner_id] = child
        return child

    def team(self, team_id: str, *, budget_tokens: int | None = None) -> Team:
        """A team led by this agent (seed §6.10): its members share the team's memories; disposed (and
        those memories unplugged) when its `with` block or this agent ends."""
        self._check_open("team")
        running = self._teams.get(team_id)
        if running is not None and not running.ended:
            raise InvalidInput(f"team_id: team {team_id!r} is already running")
        team = Team(self, team_id, self.budget_tokens if budget_tokens is None else budget_tokens)
        self._teams[team_id] = team
        return team

    def _check_free(self, owner_id: str) -> None:
        """Refuse a session id this agent, a running sub-agent or a running team member already uses: ending
        one would unplug the other's session memories."""
        running = [child for child in self._subagents.values() if not child.ended]
        running += [m for team in self._teams.values() for m in team.members.values() if not m.ended]
        if owner_id == self.owner_id or any(agent.owner_id == owner_id for agent in running):
            raise InvalidInput(f"owner_id: {owner_id!r} is already in use by this agent or one of its agents")

    def before_step(self, query: str | None = None, *, budget_tokens: int | None = None) -> str:
        """The memory block for the next model step ("" when nothing is to be injected); what it injects is
        renewed per `renew_on_inject`. `query` (the user's text) ranks the block in the relevance order (see
        `inject`); `after_step` also uses it as the question that renewal must not count."""
        self._check_open("before_step")
        budget = self.budget_tokens if budget_tokens is None else budget_tokens
        self._injection = inject(
            self.engine,
            budget,
            query=query,
            owner_id=self.owner_id,
            include_workspace=self.include_workspace,
            team_id=self.team_id,
        )
        self._question = query
        return self._injection.block

    def after_step(self, answer_text: str) -> list[str]:
        """Report the model's answer to the last `before_step` (`report_answer`): with renew_on_inject="used"
        the injected memories the answer drew on are renewed. Returns the renewed ids."""
        self._check_open("after_step")
        if self._injection is None:
            raise InvalidInput("after_step: no before_step to report on (call before_step first)")
        injection, self._injection = self._injection, None
        return self.engine.report_answer(injection, answer_text, question=self._question)

    def call_tool(self, name: str, arguments: str | dict[str, Any] | None = None) -> str:
        """Run one amnesia_* tool call for this agent (its scope, never one the model picks); the JSON text
        for the tool message. Bad calls come back as an `{"error": ...}` object, never an exception."""
        self._check_open("call_tool")
        return dispatch(
            self.engine,
            name,
            arguments,
            owner_id=self.owner_id,
            include_workspace=self.include_workspace,
            team_id=self.team_id,
        )

    def end_turn(self) -> SweepResult:
        """The turn-end sweep (seed §6.5): forget what is due, settle stale marks, prune old audit entries."""
        self._check_open("end_turn")
        return self.engine.sweep()

    def end(self) -> ForgetSummary | None:
        """The agent ended: dispose its open sub-agents and teams, then unplug its own session memories.
        Returns the summary of its own disposal (None for an agent without a session). Ending twice does
        nothing."""
        if self.ended:
            return None
        for child in self._subagents.values():
            child.end()
        for team in self._teams.values():
            team.end()
        summary = self.engine.end_agent(self.owner_id) if self.owner_id is not None else None
        self.ended = True  # only now: if the store failed, ending again retries what is left
        return summary

    def _check_open(self, action: str) -> None:
        if self.ended:
            who = f"agent {self.owner_id!r}" if self.owner_id is not None else "the main agent"
            raise InvalidInput(f"{action}: {who} has ended")


class Team:
    """A team of agents led by one `AgentSession` (seed §6.10: scope `team`, owner the team id). Its members
    (`member`) share the team's memories; a member leaving unplugs only its own session memories. Disposing
    the team (leaving its `with` block, `end`, or its lead ending) ends its open members and unplugs the
    team's memories (audited `agent-disposed`) unless promoted."""

    def __init__(self, lead: AgentSession, team_id: str, budget_tokens: int | None) -> None:
        if not isinstance(team_id, str) or not team_id.strip():
            raise InvalidInput(f"team_id: expected a non-empty string, got {team_id!r}")
        self.lead = lead
        self.team_id = team_id
        self.budget_tokens = budget_tokens
        self.members: dict[str, AgentSession] = {}
        self.ended = False

    def __enter__(self) -> Team:
        if self.ended:
            raise InvalidInput(f"enter: team {self.team_id!r} has been disposed")
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.end()

    def member(self, owner_id: str, *, budget_tokens: int | None = None) -> AgentSession:
        """A team agent with its own session `owner_id` in this team; its session memories are unplugged when
        its `with` block ends, the team's stay for the other members."""
        if self.ended:
            raise InvalidInput(f"member: team {self.team_id!r} has been disposed")
        self.lead._check_open("member")
        self.lead._check_free(owner_id)
        agent = AgentSession(
            self.lead.engine,
            owner_id,
            include_workspace=False,
            team_id=self.team_id,
            budget_tokens=self.budget_tokens if budget_tokens is None else budget_tokens,
        )
        self.members[owner_id] = agent
        return agent

    def end(self) -> ForgetSummary | None:
        """Dispose the team: end its open members, then unplug the team's memories. Returns the summary of
        the team's disposal; disposing twice does nothing (None)."""
        if self.ended:
            return None
        for agent in self.members.values():
            agent.end()
        summary = self.lead.engine.end_team(self.team_id)
        self.ended = True  # only now: if the store failed, ending again retries what is left
        return summary
