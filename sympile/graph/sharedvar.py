"""Shared variables: graph inputs with a value that lives between calls and that updates
change. The base class, of any Type; tensor/sharedvar.py makes the tensor ones and shared(),
scalar/sharedvar.py the scalar ones."""

from __future__ import annotations

import copy
from typing import Any

from sympile.graph.basic import Variable


class Container:
    """The one storage cell of a shared variable, seen by every function that uses it."""

    __slots__ = ("type", "storage", "name")

    def __init__(self, type: Any, value: Any, name: str | None):
        self.type = type
        self.storage = [value]
        self.name = name

    @property
    def value(self):
        return self.storage[0]


class SharedVariable(Variable):
    """A graph input with a persistent value (get_value / set_value), used implicitly by every
    function that depends on it."""

    # The update a function applies when the user gives none (a random state's next state);
    # `del v.default_update` leaves this None, as Theano's.
    default_update = None

    def __init__(self, type: Any, value: Any, name: str | None = None, strict: bool = False,
                 allow_downcast: bool | None = None, borrow: bool = False):
        super().__init__(type, None, None, name)
        data = type.filter(value, strict=strict, allow_downcast=allow_downcast)
        if not borrow and data is value:
            data = copy.deepcopy(data)
        self.container = Container(type, data, name)

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> Any:
        """The current value; a copy unless borrow=True."""
        value = self.container.storage[0]
        return value if borrow else copy.deepcopy(value)

    def set_value(self, value: Any, borrow: bool = False) -> None:
        """Replace the value (converted to this variable's Type); copied unless borrow=True."""
        try:
            data = self.type.filter(value)
        except TypeError as error:
            raise TypeError(f"set_value of shared variable {self}: {error}") from None
        if not borrow and data is value:
            data = self._copy(data)
        self.container.storage[0] = data

    def _copy(self, data: Any) -> Any:
        """A copy of a value of this variable's Type that shares no memory with it."""
        return copy.deepcopy(data)

    def clone(self, name: str | None = None):
        copy_ = self.__class__.__new__(self.__class__)
        copy_.__dict__.update(self.__dict__)
        if name is not None:
            copy_.name = name
        return copy_

    @property
    def value(self):
        return self.get_value()

    def __str__(self):
        return self.name if self.name is not None else f"<shared {self.type}>"
