"""`sympile-cache list|size|clear` (also `python -m sympile.cache`)."""

from __future__ import annotations

import argparse
import sys

from sympile import cache


def _human(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    value = size / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _age(seconds: float) -> str:
    for unit, length in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= length:
            return f"{seconds / length:.1f}{unit}"
    return f"{seconds:.0f}s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sympile-cache",
                                     description="Inspect or clear sympile's compiled C modules.")
    parser.add_argument("command", choices=("list", "size", "clear"))
    arguments = parser.parse_args(argv)
    if arguments.command == "list":
        entries = cache.list_entries()
        for entry in entries:
            status = "" if entry.valid else "  (invalid: rebuilt on next use)"
            print(f"{entry.key}  {_age(entry.age_s):>7}  {_human(entry.size):>10}{status}")
        print(f"{len(entries)} entries in {cache.cache_root()}")
    elif arguments.command == "size":
        entries = cache.list_entries()
        total = sum(entry.size for entry in entries)
        print(f"{total} bytes ({_human(total)}) in {len(entries)} entries in {cache.cache_root()}")
    else:
        removed = cache.clear()
        print(f"removed {removed} entries from {cache.cache_root()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
