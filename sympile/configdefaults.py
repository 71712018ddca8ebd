"""Theano's `theano.configdefaults` helpers that programs and tests call: the machine's
pointer and C long widths."""

from __future__ import annotations

import struct

__all__ = ["local_bitwidth", "python_int_bitwidth"]


def local_bitwidth() -> int:
    """The width in bits of a memory pointer (size_t) on this machine: 32 or 64."""
    return struct.calcsize("P") * 8


def python_int_bitwidth() -> int:
    """The width in bits of a C long (Python 2's int; numpy's default int on most systems)."""
    return struct.calcsize("l") * 8
