"""The MemoryStore port, for whoever writes a memory store.

The protocol, the key and the fact, the checks and helpers every memory store shares, the
raw-storage hook, and the in-memory memory store.
"""

from psych_runtime.core.raw import (
    RawItem as RawItem,
    RawStorage as RawStorage,
    mentions as mentions,
)
from psych_runtime.memory.checks import (
    CheckedMemoryStore as CheckedMemoryStore,
    check_memory_content as check_memory_content,
    check_memory_key as check_memory_key,
    check_recall_limit as check_recall_limit,
    mint_memory as mint_memory,
    newest_facts as newest_facts,
    no_memory_can_match as no_memory_can_match,
)
from psych_runtime.memory.local import (
    InMemoryMemoryStore as InMemoryMemoryStore,
)
from psych_runtime.memory.port import (
    MAX_MEMORY_CHARS as MAX_MEMORY_CHARS,
    Memory as Memory,
    MemoryKey as MemoryKey,
    MemoryStore as MemoryStore,
)

__all__ = [
    "MAX_MEMORY_CHARS",
    "CheckedMemoryStore",
    "InMemoryMemoryStore",
    "Memory",
    "MemoryKey",
    "MemoryStore",
    "RawItem",
    "RawStorage",
    "check_memory_content",
    "check_memory_key",
    "check_recall_limit",
    "mentions",
    "mint_memory",
    "newest_facts",
    "no_memory_can_match",
]
