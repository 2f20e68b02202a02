"""`agent-managed`: the Amnesia engine, but the model manages it. The task's scripted remember/forget specs
are not applied; instead the model sees the seven `amnesia_*` tools on every call (the runner's tool loop,
`runners.toolloop`) and decides itself what to remember, recall and forget. Injection works as in `amnesia`,
so what the model stored comes back in later sessions' memory blocks.

Needs a model with function calling (e.g. `--model openai:<model>` on a server that supports tools); every
tool call is logged as a `tool_call` record next to the `model_call` records of its turn.
"""

from __future__ import annotations

from typing import Any

from amnesia.tools import TOOLS, dispatch
from arms.amnesia_arm import AmnesiaArm
from tasks.spec import ForgetSpec, RememberSpec


class AgentManagedArm(AmnesiaArm):
    name = "agent-managed"

    @property
    def tools(self) -> list[dict[str, Any]]:
        return TOOLS

    def remember(self, spec: RememberSpec) -> None:
        return None  # the model decides what to write, through amnesia_remember

    def forget(self, spec: ForgetSpec) -> None:
        return None  # ... and what to drop, through amnesia_forget

    def dispatch_tool(self, name: str, arguments: str) -> str:
        """Run one tool call as the current agent: the main agent sees the workspace and its session, a
        sub-agent only its own session."""
        session = self._session()
        return dispatch(
            self._engine(),
            name,
            arguments,
            owner_id=session.session_id,
            include_workspace=session.agent == "main",
        )
