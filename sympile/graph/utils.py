"""Small helpers of the IR layer: where the user created a variable, a scratchpad, and the
binding of methods from a layer above onto a class below."""

from __future__ import annotations

import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INSIDE_PACKAGE: dict[str, bool] = {}


class MethodNotDefined(NotImplementedError):
    """An Op does not implement an optional part of the Op contract."""


class Scratchpad:
    """A bag of attributes attached to a Variable (its ``tag``)."""

    def __repr__(self):
        return f"Scratchpad({self.__dict__!r})"


def user_creation_site() -> str | None:
    """'file:line' of the innermost stack frame outside the sympile package.

    Error messages at run time point the user at the line that built the offending variable.
    """
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        inside = _INSIDE_PACKAGE.get(filename)
        if inside is None:
            inside = os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)
            _INSIDE_PACKAGE[filename] = inside
        if not inside:
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def user_stacklevel() -> int:
    """The `stacklevel` that makes a warnings.warn in the caller of this function point at
    the innermost frame outside the sympile package (the user's line)."""
    frame, level = sys._getframe(1), 1
    while frame is not None:
        if not os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
            return level
        frame, level = frame.f_back, level + 1
    return 1


# What every class body holds whatever it defines (__module__, __dict__, __doc__, ...).
_CLASS_INTERNALS = frozenset(vars(type("Empty", (), {})))


def bind_methods(target: type, source: type) -> None:
    """Copy the methods, properties and attributes that `source`'s body defines onto `target`.

    A class low in the layers (TensorVariable) gets methods that call modules built on top of
    it (x.sum() calls tensor.reduction): the upper module defines them on `source` and binds
    them when it is imported, so imports run one way, as JAX binds its array methods."""
    for name, value in vars(source).items():
        if name not in _CLASS_INTERNALS:
            setattr(target, name, value)
