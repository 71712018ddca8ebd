"""The reference backend (see vm.py)."""

from sympile.link.python.vm import PythonVM, raise_with_node  # noqa: F401
