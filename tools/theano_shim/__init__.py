"""The plumbing that runs Theano 1.0.5's own unit tests against sympile (see
tools/theano_tests.py): `install(theano_root)` makes `import theano.X` import sympile.X,
loads Theano's test modules (theano/**/tests/*.py) and its py2/3 helpers (theano.compat)
from the fetched source, serves the test helpers Theano's tests import from nose,
numpy.testing.dec and theano.tests.unittest_tools (and the comparison helper
theano.tensor.basic._allclose and theano.sparse.basic's _is_sparse and the like, private
helpers; numpy.find_common_type, numpy.cast and numpy.product, which numpy 2 removed), and
collects nose's test generators.

Nothing here supplies a Theano API name that sympile lacks: a missing name fails its test,
which is what the run measures. A name a test module imports (`from theano.tensor import a,
b`) that sympile lacks, or every name of a module it lacks, fails the tests that use it, not
the whole module: the import gives the module a placeholder that raises "module 'sympile.X'
has no attribute 'a'" (or "No module named ...") when it is called, looked into, subclassed
or used in isinstance.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import os
import sys
from types import ModuleType

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


class _Alias(importlib.abc.Loader):
    """Loads `theano.X` as the already imported module sympile.X itself."""

    def __init__(self, target: ModuleType):
        self.target = target

    def create_module(self, spec):
        return self.target

    def exec_module(self, module):
        pass


class _MissingMeta(type):
    """The type of a placeholder for a name sympile lacks: any use raises."""

    def __new__(meta, name, bases, namespace):
        for base in bases:
            if isinstance(base, meta):
                raise AttributeError(base.message)
        return super().__new__(meta, name, bases, namespace)

    def _fail(cls, *args, **kwargs):
        raise AttributeError(cls.message)

    __call__ = __instancecheck__ = __subclasscheck__ = _fail

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(cls.message)


class _ImportedFrom:
    """What `from theano.X import ...` sees: module X, with placeholders for the names it
    lacks."""

    def __init__(self, module: ModuleType, missing: list[str], message: str | None = None):
        self._module = module
        self._missing = {name: _MissingMeta(name, (), {"message": message or (
            f"module '{module.__name__}' has no attribute '{name}'")}) for name in missing}

    def __getattr__(self, name):
        if name in self._missing:
            return self._missing[name]
        return getattr(self._module, name)


class _TheanoPackage:
    """What `import theano` gives a test module: sympile, except that `__file__` is Theano's
    own, so the test data Theano ships (sandbox/samples_MRG31k3p_12_7_5.txt) is found."""

    def __init__(self, module: ModuleType, file: str):
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "__file__", file)

    def __getattr__(self, name):
        return getattr(self._module, name)

    def __setattr__(self, name, value):
        setattr(self._module, name, value)


_THEANO_FILE: list[str] = []


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    theano = not level and (name == "theano" or name.startswith("theano."))
    try:
        module = builtins.__import__(name, globals, locals, fromlist, level)
    except ModuleNotFoundError as error:
        # `from theano.X import a, b` where sympile has no module X: every name is missing.
        if not (theano and fromlist and error.name == name):
            raise
        return _ImportedFrom(ModuleType(name), list(fromlist), f"No module named '{name}'")
    if not theano:
        return module
    if not fromlist:
        return _TheanoPackage(module, _THEANO_FILE[0])
    missing = [entry for entry in fromlist if entry != "*" and not hasattr(module, entry)]
    return _ImportedFrom(module, missing) if missing else module


_TEST_BUILTINS = dict(vars(builtins), __import__=_import)


class _TestModuleLoader(importlib.machinery.SourceFileLoader):
    """Theano's test modules, executed with _import as their import statement."""

    def exec_module(self, module):
        module.__builtins__ = _TEST_BUILTINS
        super().exec_module(module)


class TheanoFinder(importlib.abc.MetaPathFinder):
    """theano.X -> sympile.X; theano's tests and compat -> Theano's source files;
    theano.tests.unittest_tools -> this package's."""

    def __init__(self, theano_root: str):
        self.theano_root = theano_root

    def _source_spec(self, fullname: str):
        parts = fullname.split(".")[1:]
        directory = os.path.join(self.theano_root, *parts)
        if os.path.isdir(directory):
            path = os.path.join(directory, "__init__.py")
            return importlib.util.spec_from_file_location(
                fullname, path, loader=_TestModuleLoader(fullname, path),
                submodule_search_locations=[directory])
        path = directory + ".py"
        return importlib.util.spec_from_file_location(
            fullname, path, loader=_TestModuleLoader(fullname, path)) \
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


class _NumpyCast:
    """numpy < 2's np.cast: np.cast[dtype](x) is x as an array of dtype."""

    def __getitem__(self, dtype):
        import numpy
        return lambda value: numpy.asarray(value).astype(dtype)


def _find_common_type(array_types, scalar_types):
    """numpy < 2's find_common_type, which Theano's tests call (numpy 2 removed it): the
    arrays' common dtype, unless the scalars' is of a higher kind (bool, unsigned, signed,
    float, complex), then the smallest dtype that holds both."""
    import numpy

    kinds = "buifc"
    arrays = [numpy.dtype(value) for value in array_types]
    scalars = [numpy.dtype(value) for value in scalar_types]
    array_type = numpy.result_type(*arrays) if arrays else None
    scalar_type = numpy.result_type(*scalars) if scalars else None
    if array_type is None or scalar_type is None:
        return scalar_type if array_type is None else array_type
    if kinds.index(scalar_type.kind) <= kinds.index(array_type.kind):
        return array_type
    if numpy.can_cast(array_type, scalar_type):
        return scalar_type
    return numpy.result_type(array_type, scalar_type)


def install(theano_root: str) -> None:
    """Set up the imports for a run over the Theano source at `theano_root` (the
    directory of Theano's package, holding tensor/, tests/, ...)."""
    import numpy.testing

    from . import numpy_dec

    sys.path.insert(0, HERE)  # this package's nose
    numpy.testing.dec = numpy_dec
    if not hasattr(numpy, "find_common_type"):
        numpy.find_common_type = _find_common_type
    # numpy < 2's np.product (prod's old name) and np.cast[dtype](x) (x as an array of
    # dtype), which Theano's tests call.
    numpy.__dict__.setdefault("product", numpy.prod)
    numpy.__dict__.setdefault("cast", _NumpyCast())
    sys.meta_path.insert(0, TheanoFinder(theano_root))
    _THEANO_FILE.append(os.path.join(theano_root, "__init__.py"))
    # Theano's tests compare with theano.tensor.basic._allclose, a test helper of Theano's
    # (private, not API): served in this process only.
    import sympile.tensor.basic

    from . import unittest_tools
    sympile.tensor.basic._allclose = unittest_tools.allclose
    # and its tolerances, which tests change and put back (theano.tensor.basic.float32_atol).
    for dtype, (atol, rtol) in unittest_tools.TOLERANCES.items():
        setattr(sympile.tensor.basic, f"{dtype}_atol", atol)
        setattr(sympile.tensor.basic, f"{dtype}_rtol", rtol)
    # And theano.sparse.basic's private predicates, which its sparse tests call.
    import scipy.sparse

    import sympile.sparse.basic
    sparse = sympile.sparse.basic
    sparse._mtypes = [scipy.sparse.csc_matrix, scipy.sparse.csr_matrix]
    sparse._is_sparse = lambda x: isinstance(x, scipy.sparse.spmatrix)
    sparse._is_dense = lambda x: isinstance(x, numpy.ndarray)
    sparse._is_sparse_variable = sympile.sparse.type.is_sparse
    sparse._is_dense_variable = lambda x: isinstance(getattr(x, "type", None),
                                                     sympile.tensor.TensorType)


def pytest_pycollect_makeitem(collector, name, obj):
    """Nose's test generators (`def test_x(): yield check, arg`), which pytest no longer
    collects: one test per (function, *arguments) the generator yields, as nose ran them. A
    generator method of a test class runs on an instance, after the class's setup_class and
    the instance's setUp, as nose ran it."""
    if not (inspect.isgeneratorfunction(obj) and collector.funcnamefilter(name)):
        return None
    try:
        generator = obj
        if isinstance(collector, pytest.Class):
            test_class = collector.obj
            if hasattr(test_class, "setup_class"):
                test_class.setup_class()
            instance = test_class()
            for setup in ("setup_method", "setUp", "setup"):
                if callable(getattr(instance, setup, None)):
                    getattr(instance, setup)(*([obj] if setup == "setup_method" else []))
                    break
            generator = getattr(instance, name)
        # Nose takes (function, *arguments) or a bare function.
        cases = [case if isinstance(case, tuple) else (case,) for case in generator()]
    except Exception as error:  # the generator itself fails: one failing test says why
        def failed(error=error):
            raise error
        return [pytest.Function.from_parent(collector, name=name, callobj=failed)]
    return [pytest.Function.from_parent(collector, name=f"{name}[{index}]",
                                        callobj=functools.partial(case[0], *case[1:]))
            for index, case in enumerate(cases)]
