"""The plumbing that runs Theano 1.0.5's own unit tests against sympile (see
tools/theano_tests.py): `install(theano_root)` makes `import theano.X` import sympile.X,
loads Theano's test modules (theano/**/tests/*.py) and its py2/3 helpers (theano.compat)
from the fetched source, and serves the test helpers Theano's tests import from nose,
numpy.testing.dec and theano.tests.unittest_tools (and the comparison helper
theano.tensor.basic._allclose). Nothing here supplies a Theano API name that sympile lacks:
a missing name fails its test, which is what the run measures.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys
from types import ModuleType

HERE = os.path.dirname(os.path.abspath(__file__))


class _Alias(importlib.abc.Loader):
    """Loads `theano.X` as the already imported module sympile.X itself."""

    def __init__(self, target: ModuleType):
        self.target = target

    def create_module(self, spec):
        return self.target

    def exec_module(self, module):
        pass


class TheanoFinder(importlib.abc.MetaPathFinder):
    """theano.X -> sympile.X; theano's tests and compat -> Theano's source files;
    theano.tests.unittest_tools -> this package's."""

    def __init__(self, theano_root: str):
        self.theano_root = theano_root

    def _source_spec(self, fullname: str):
        parts = fullname.split(".")[1:]
        directory = os.path.join(self.theano_root, *parts)
        if os.path.isdir(directory):
            return importlib.util.spec_from_file_location(
                fullname, os.path.join(directory, "__init__.py"),
                submodule_search_locations=[directory])
        path = directory + ".py"
        return importlib.util.spec_from_file_location(fullname, path) \
            if os.path.exists(path) else None

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "theano" and not fullname.startswith("theano."):
            return None
        if fullname == "theano.tests.unittest_tools":
            return importlib.util.spec_from_file_location(
                fullname, os.path.join(HERE, "unittest_tools.py"))
        parts = fullname.split(".")
        if "tests" in parts or parts[1:2] == ["compat"]:
            return self._source_spec(fullname)
        name = "sympile" + fullname[len("theano"):]
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            parent, _, last = name.rpartition(".")
            module = getattr(sys.modules.get(parent), last, None)
            if not isinstance(module, ModuleType):
                return None
        return importlib.util.spec_from_loader(fullname, _Alias(module),
                                               is_package=hasattr(module, "__path__"))


def install(theano_root: str) -> None:
    """Set up the imports for a run over the Theano source at `theano_root` (the
    directory of Theano's package, holding tensor/, tests/, ...)."""
    import numpy.testing

    from . import numpy_dec

    sys.path.insert(0, HERE)  # this package's nose
    numpy.testing.dec = numpy_dec
    sys.meta_path.insert(0, TheanoFinder(theano_root))
    # Theano's tests compare with theano.tensor.basic._allclose, a test helper of Theano's
    # (private, not API): served in this process only.
    import sympile.tensor.basic

    from . import unittest_tools
    sympile.tensor.basic._allclose = unittest_tools.allclose
