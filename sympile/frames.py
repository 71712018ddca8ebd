"""Where the user's code is on the stack: the innermost frame outside the sympile package,
for error messages (the line that built a variable) and warnings (stacklevel). A leaf
module: config, the lowest layer, uses it too."""

from __future__ import annotations

import os
import sys

__all__ = ["user_creation_site", "user_stacklevel"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_INSIDE_PACKAGE: dict[str, bool] = {}


def _inside(filename: str) -> bool:
    inside = _INSIDE_PACKAGE.get(filename)
    if inside is None:
        inside = os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)
        _INSIDE_PACKAGE[filename] = inside
    return inside


def user_creation_site() -> str | None:
    """'file:line' of the innermost stack frame outside the sympile package.

    Error messages at run time point the user at the line that built the offending variable.
    """
    frame = sys._getframe(1)
    while frame is not None:
        if not _inside(frame.f_code.co_filename):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def user_stacklevel() -> int:
    """The `stacklevel` that makes a warnings.warn in the caller of this function point at
    the innermost frame outside the sympile package (the user's line)."""
    frame, level = sys._getframe(1), 1
    while frame is not None:
        if not _inside(frame.f_code.co_filename):
            return level
        frame, level = frame.f_back, level + 1
    return 1
