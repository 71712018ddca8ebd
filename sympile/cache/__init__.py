"""The on-disk cache of compiled C (sympile/cache/store.py), the checks that no other user
could have written what it loads (trust.py), its command line (`python -m sympile.cache`,
cli.py) and the progress line of long builds (progress.py).

The link layer builds and loads through these names; store.py's docstring describes the
layout, the keys and the locking.
"""

from sympile.cache.store import (
    LOCK_NAME,
    META_NAME,
    SOURCE_NAME,
    CompileError,
    Entry,
    LoadResult,
    build,
    build_units,
    cache_root,
    clear,
    compute_key,
    entry_is_valid,
    is_cached,
    key_inputs,
    list_entries,
    load,
    platform_tag,
    prune,
    total_size,
    verify,
)
from sympile.cache.trust import UnsafeCacheError

__all__ = ["LOCK_NAME", "META_NAME", "SOURCE_NAME", "CompileError", "Entry", "LoadResult",
           "build", "build_units", "cache_root", "clear", "compute_key", "entry_is_valid",
           "is_cached", "key_inputs", "list_entries", "load", "platform_tag", "prune",
           "total_size", "UnsafeCacheError", "verify"]
