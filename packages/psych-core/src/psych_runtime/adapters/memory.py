"""The MemoryStore port, for whoever writes a memory store.

The protocol, the key and the fact, the checks and helpers every memory store shares, the
raw-storage hook, and the in-memory memory store.
"""

from psych_runtime.core.raw import RawItem as RawItem
from psych_runtime.core.raw import RawStorage as RawStorage
from psych_runtime.core.raw import mentions as mentions
from psych_runtime.memory.checks import CheckedMemoryStore as CheckedMemoryStore
from psych_runtime.memory.checks import check_memory_content as check_memory_content
from psych_runtime.memory.checks import check_memory_key as check_memory_key
from psych_runtime.memory.checks import check_recall_limit as check_recall_limit
from psych_runtime.memory.checks import mint_memory as mint_memory
from psych_runtime.memory.checks import newest_facts as newest_facts
from psych_runtime.memory.checks import no_memory_can_match as no_memory_can_match
from psych_runtime.memory.local import InMemoryMemoryStore as InMemoryMemoryStore
from psych_runtime.memory.port import MAX_MEMORY_CHARS as MAX_MEMORY_CHARS
from psych_runtime.memory.port import Memory as Memory
from psych_runtime.memory.port import MemoryKey as MemoryKey
from psych_runtime.memory.port import MemoryStore as MemoryStore

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
