"""Memory policies ("arms"). Importing this package registers every arm: one import line per arm module."""

from arms import (  # noqa: F401
    agent_managed,
    amnesia_arm,
    claims,
    clue_folding,
    memorybank,
    no_memory,
    presets,
    retrieval,
)
