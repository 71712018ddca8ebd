"""The index kinds of an indexing op's idx_list (see ops.py's docstring): the IndexInput
placeholders SCALAR, ARRAY and MASK for indices given as node inputs, and IndexSlice. A leaf
module, so that the C generators of the family read them without importing the ops."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ARRAY", "MASK", "SCALAR", "IndexInput", "IndexSlice", "SlicePart"]


@dataclass(frozen=True)
class IndexInput:
    """Placeholder in an idx_list for an index given as a node input: kind 'scalar' (an integer
    scalar), 'array' (an integer array) or 'mask' (a boolean array)."""

    kind: str

    def __post_init__(self):
        if self.kind not in ("scalar", "array", "mask"):
            raise ValueError(f"IndexInput: kind must be 'scalar', 'array' or 'mask', got "
                             f"{self.kind!r}")

    def __repr__(self):
        return "?" if self.kind == "scalar" else self.kind


SCALAR = IndexInput("scalar")
ARRAY = IndexInput("array")
MASK = IndexInput("mask")

SlicePart = int | IndexInput | None


@dataclass(frozen=True)
class IndexSlice:
    """A slice in an idx_list (Python's slices are not hashable before 3.12). Each part is
    None, an int, or SCALAR for a symbolic part."""

    start: SlicePart = None
    stop: SlicePart = None
    step: SlicePart = None

    def __post_init__(self):
        for part in self.parts:
            if not (part is None or part == SCALAR
                    or (isinstance(part, int) and not isinstance(part, bool))):
                raise ValueError(f"IndexSlice: a part must be None, an int or SCALAR, got "
                                 f"{part!r}")
        if self.step == 0:
            raise ValueError("IndexSlice: slice step cannot be zero")

    @property
    def parts(self) -> tuple[SlicePart, SlicePart, SlicePart]:
        return (self.start, self.stop, self.step)

    def __repr__(self):
        def text(part):
            return "" if part is None else repr(part)
        result = f"{text(self.start)}:{text(self.stop)}"
        return result if self.step is None else f"{result}:{text(self.step)}"
