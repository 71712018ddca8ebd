"""Small helpers of the IR layer: where the user created a variable, a scratchpad, the
binding of methods from a layer above onto a class below, and the count of a function's
positional parameters (which of Theano's and PyTensor's signatures a method has)."""

from __future__ import annotations

import inspect
from typing import Any

from sympile.frames import user_creation_site, user_stacklevel

__all__ = ["MethodNotDefined", "Scratchpad", "bind_methods", "positional_parameter_count",
           "user_creation_site", "user_stacklevel"]


def positional_parameter_count(function: Any) -> int:
    """How many positional parameters `function` takes (self included, for a method)."""
    return sum(parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
               for parameter in inspect.signature(function).parameters.values())


class MethodNotDefined(NotImplementedError):
    """An Op does not implement an optional part of the Op contract."""


class Scratchpad:
    """A bag of attributes attached to a Variable (its ``tag``)."""

    def __repr__(self):
        return f"Scratchpad({self.__dict__!r})"


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
