"""Storage backends behind one interface (`amnesia.stores.base.Store`)."""

from amnesia.stores.base import Store
from amnesia.stores.memory import InMemoryStore
from amnesia.stores.sqlite import SQLiteStore

__all__ = ["InMemoryStore", "SQLiteStore", "Store"]
