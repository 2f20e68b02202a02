"""`agent-managed`: the Amnesia engine, but the model manages it. The task's scripted remember/forget specs
are not applied; instead the model sees the seven `amnesia_*` tools on every call (the runner's tool loop,
`runners.toolloop`) and decides itself what to remember, recall and forget. Injection works as in `amnesia`,
so what the model stored comes back in later sessions' memory blocks.

Needs a model with function calling (e.g. `--model openai:<model>` on a server that supports tools); every
tool call is logged as a `tool_call` record next to the `model_call` records of its turn.
"""

from __future__ import annotations

from typing import Any, ClassVar

from amnesia.tools import TOOLS
from arms.amnesia_arm import AmnesiaArm
from tasks.spec import ForgetSpec, RememberSpec


class AgentManagedArm(AmnesiaArm):
    name = "agent-managed"
    MODEL_MANAGED: ClassVar[bool] = True

    @property
    def tools(self) -> list[dict[str, Any]]:
        """Always offered: the model is the only writer."""
        return TOOLS

    def remember(self, spec: RememberSpec) -> None:
        return None  # the model decides what to write, through amnesia_remember

    def forget(self, spec: ForgetSpec) -> None:
        return None  # ... and what to drop, through amnesia_forget
