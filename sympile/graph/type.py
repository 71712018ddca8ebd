"""Type: what values a Variable may hold, and how a user's value is converted to one."""

from __future__ import annotations

from typing import Any

from sympile.graph.basic import Constant, Variable


class Type:
    """Base of all Types. Types are immutable, equal and hashed by their class and the values
    of the attributes named in `__props__` (subclasses may define __eq__/__hash__ instead).

    Subclasses implement `filter`; `variable_type` and `constant_type` are the Variable
    classes that `make_variable` and `make_constant` build.
    """

    __props__: tuple[str, ...] = ()
    variable_type: type[Variable] = Variable
    constant_type: type[Constant] = Constant
    # True where every value is a numpy array of self.dtype with self.ndim dimensions and the
    # static lengths self.shape (None: any): the C backend hands such values to ops' C code
    # and checks them itself. Other values (sparse matrices, random states) only perform()
    # reads, after the Function's filter. A backend asks this, never for a Type's class.
    is_ndarray: bool = False

    def _props(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__props__)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._props() == other._props()

    def __hash__(self) -> int:
        return hash((type(self), self._props()))

    def __str__(self) -> str:
        if self.__props__:
            args = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__props__)
            return f"{type(self).__name__}({args})"
        return type(self).__name__

    def __repr__(self) -> str:
        return str(self)

    def filter(self, value: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return `value` as a valid value of this Type, or raise TypeError saying why not.

        strict: accept only values that already are valid, returned unconverted.
        allow_downcast: allow conversions that may lose precision.
        """
        raise NotImplementedError(f"{type(self).__name__}.filter")

    def is_valid_value(self, value: Any) -> bool:
        """True if `value` is a value of this Type as it is (strict filter)."""
        try:
            self.filter(value, strict=True)
        except (TypeError, ValueError):
            return False
        return True

    def values_eq(self, a: Any, b: Any) -> bool:
        """True if the values `a` and `b` of this Type are equal."""
        return a == b

    def values_eq_approx(self, a: Any, b: Any) -> bool:
        """True if `a` and `b` are equal up to the Type's rounding tolerance."""
        return self.values_eq(a, b)

    def data_signature(self, data: Any) -> Any:
        """A hashable summary of a constant's value, used to merge equal constants."""
        return data

    def make_variable(self, name: str | None = None) -> Variable:
        """A new graph input of this Type."""
        return self.variable_type(self, None, None, name)

    def make_constant(self, value: Any, name: str | None = None) -> Constant:
        """A Constant of this Type holding `filter(value)`."""
        return self.constant_type(self, value, name)

    def __call__(self, name: str | None = None) -> Variable:
        """Same as make_variable: `MyType()("x")` is a new input named x."""
        return self.make_variable(name)

    def is_super(self, other: Type) -> bool:
        """True if every value of `other` is a value of this Type."""
        return self == other

    def convert_variable(self, variable: Variable) -> Variable | None:
        """`variable` as a Variable of this Type, if that is possible without computation
        (its Type is this one or a more specific one), else None."""
        if self.is_super(variable.type):
            return variable
        return None
