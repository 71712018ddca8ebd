"""`sympile-cache list|size|clear|verify|prune` (also `python -m sympile.cache`).

    sympile-cache verify                          check every entry, remove the bad ones
    sympile-cache prune --older-than 30d          remove entries older than 30 days
    sympile-cache prune --max-size 500M           remove the oldest until 500 MiB remain
"""

from __future__ import annotations

import argparse
import os
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


_DURATIONS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_SIZES = {"": 1, "B": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}


def _duration(text: str) -> float:
    """'30d', '12h', '45m', '90s' or seconds."""
    number, unit = (text[:-1], text[-1]) if text[-1:] in _DURATIONS else (text, "s")
    try:
        value = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a duration such as 30d, 12h or 90s, got "
                                         f"{text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a duration must be >= 0, got {text!r}")
    return value * _DURATIONS[unit]


def _size(text: str) -> int:
    """'500M', '2G', '800K' or bytes (powers of 1024)."""
    unit = text[-1:].upper() if text[-1:].upper() in _SIZES else ""
    try:
        value = float(text[:len(text) - len(unit)])
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a size such as 500M or 2G, got "
                                         f"{text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a size must be >= 0, got {text!r}")
    return int(value * _SIZES[unit])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sympile-cache",
                                     description="Inspect or clear sympile's compiled C modules.")
    parser.add_argument("command", choices=("list", "size", "clear", "verify", "prune"))
    parser.add_argument("--older-than", type=_duration, default=None,
                        help="prune: remove entries older than this (30d, 12h, 90s)")
    parser.add_argument("--max-size", type=_size, default=None,
                        help="prune: remove the oldest entries until at most this remains "
                             "(500M, 2G)")
    arguments = parser.parse_args(argv)
    if arguments.command != "prune" and (arguments.older_than is not None
                                         or arguments.max_size is not None):
        parser.error("--older-than and --max-size go with prune")
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
    elif arguments.command == "clear":
        removed = cache.clear()
        print(f"removed {removed} entries from {cache.cache_root()}")
    elif arguments.command == "verify":
        checked, removed = cache.verify()
        print(f"checked {checked} entries, removed {removed} bad ones from "
              f"{cache.cache_root()}")
    else:
        if arguments.older_than is None and arguments.max_size is None:
            parser.error("prune needs --older-than and/or --max-size")
        removed = cache.prune(arguments.older_than, arguments.max_size)
        print(f"removed {removed} entries from {cache.cache_root()}")
    return 0


def console_main() -> int:
    """The console script: `sympile-cache list | head` ends quietly when head exits."""
    try:
        return main()
    except BrokenPipeError:
        # Python would report the pipe again when flushing stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(console_main())
