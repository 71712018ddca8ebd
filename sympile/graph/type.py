"""Type: what values a Variable may hold, and how a user's value is converted to one."""

from __future__ import annotations

from typing import Any

from sympile.graph.basic import Constant, Variable


class Type:
    """Base of all Types. Subclasses are immutable, compared and hashed by their props."""

    variable_type = Variable
    constant_type = Constant

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return `value` as a valid value of this Type, or raise TypeError.

        strict: accept only values that already are valid, unconverted.
        allow_downcast: allow conversions that may lose precision.
        """
        raise NotImplementedError(f"{type(self).__name__}.filter")

    def is_valid_value(self, value: Any) -> bool:
        try:
            self.filter(value, strict=True)
        except (TypeError, ValueError):
            return False
        return True

    def values_eq(self, a: Any, b: Any) -> bool:
        return a == b

    def values_eq_approx(self, a: Any, b: Any) -> bool:
        return self.values_eq(a, b)

    def data_signature(self, data: Any) -> Any:
        """A hashable summary of a constant's value, used to merge equal constants."""
        return data

    def make_variable(self, name: str | None = None) -> Variable:
        return self.variable_type(self, None, None, name)

    def make_constant(self, value: Any, name: str | None = None) -> Constant:
        return self.constant_type(self, value, name)

    def __call__(self, name: str | None = None) -> Variable:
        return self.make_variable(name)

    def is_super(self, other: Type) -> bool:
        """True if every value of `other` is a value of this Type."""
        return self == other

    def convert_variable(self, variable: Variable) -> Variable | None:
        """`variable` as a Variable of this Type, if that is possible without computation."""
        if variable.type == self:
            return variable
        return None
