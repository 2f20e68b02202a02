"""Importers of public long-conversation datasets into the task format (tasks/README.md, "Imported sets").

- `tasks.importers.locomo`: LoCoMo (Maharana et al., ACL 2024), one task per conversation.
- `tasks.importers.longmemeval`: LongMemEval (Wu et al., ICLR 2025), one task per question.

Both write through `tasks.writeset` (deterministic YAML + MANIFEST.json naming the source, license and
citation) and give every write the ttl chosen by a `WrittenTtlPolicy` (`tasks.importers.common`), since the
datasets carry none. The datasets' text is never shipped with the project: users point the importer at
their copy.
"""
