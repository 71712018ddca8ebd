"""Issue 34: the fixed units compiled when the package is built (sympile.compile.prebuild)
serve a new install's first function from the prebuilt tier (sympile.cache.store), which is
trusted as the cache is and keyed as the cache is wherever the package lies."""

from __future__ import annotations

import os
import re
import shutil
import stat

import numpy as np
import pytest

from sympile.cache import store
from sympile.compile.prebuild import fixed_units, prebuild
from sympile.config import config
from sympile.graph.ccode import content_name
from sympile.link.c import prelude
from tests.link.c.test_compiler_runs import _training_step
from tests.link.c.utils import requires_compiler


@pytest.fixture(scope="module")
def tier(tmp_path_factory):
    """A prebuilt tier, as setup.py makes it, and its entries' keys (the header's first)."""
    directory = tmp_path_factory.mktemp("prebuilt")
    return str(directory), prebuild(str(directory))


def _record_compiles(monkeypatch, tier_directory: str) -> list[str]:
    """Use `tier_directory` as the prebuilt tier; the list the compiler's runs are recorded
    in from now on (the name of each one's first source, or 'link')."""
    compiled: list[str] = []
    run = store.subprocess.run

    def recording(command, *arguments, **keywords):
        compiled.append(next((os.path.basename(part) for part in command
                              if part.endswith((".c", ".h"))), "link"))
        return run(command, *arguments, **keywords)

    monkeypatch.setattr(store.subprocess, "run", recording)
    monkeypatch.setattr(store, "PREBUILT_DIR", tier_directory)
    return compiled


def _build_recording(tmp_path, monkeypatch, tier_directory: str,
                     rate: float) -> tuple[list[str], str, list[str]]:
    """Build and run a training step (of learning `rate`, a constant in its code: a module
    this process has not loaded) in an empty cache with `tier_directory` as the tier: (the
    sources the compiler ran on, the cache's platform directory, the kinds of the step's
    nodes)."""
    compiled = _record_compiles(monkeypatch, tier_directory)
    with config.change_flags(compiledir=str(tmp_path / "cache"), compile_async=False):
        step = _training_step(10, 16, rate)
        costs = [step(index) for index in range(3)]
        root = store.cache_root()
    assert np.all(np.isfinite(costs)) and costs[2] < costs[0]
    return compiled, root, [type(node.op).__name__ for node in step.maker.fgraph.toposort()]


@requires_compiler
def test_a_new_install_compiles_no_fixed_unit(tier, tmp_path, monkeypatch):
    directory, keys = tier
    assert len(keys) == 1 + len(fixed_units())
    compiled, root, kinds = _build_recording(tmp_path, monkeypatch, directory, 0.11)
    # The header, the program unit, the governor, the skinny and BLAS units: all from the
    # tier, none in the cache; what compiled is the graph's own units, its main unit and
    # the link, one run each.
    assert not set(keys) & set(os.listdir(root))
    assert prelude.UNIT_HEADER_NAME not in compiled
    graph_units = [name for name in os.listdir(root)
                   if os.path.exists(os.path.join(root, name, store.UNIT_OBJECT_NAME))]
    assert compiled.count("unit.c") == len(graph_units) > 0
    assert compiled.count("module.c") == 1 and compiled.count("link") == 1
    # Nodes served by library entries (prebuilt) compile no unit of their own: views, shapes,
    # products, and Elemwise, whose units are its kernels alone.
    served = {"DimShuffle", "Shape_i", "Subtensor", "Dot", "Gemm", "Elemwise", "Alloc",
              "CrossentropySoftmax1Hot", "CrossentropySoftmax1HotDx"}
    assert {"DimShuffle", "Elemwise"} <= set(kinds) and {"Dot", "Gemm"} & set(kinds)
    sources = [open(os.path.join(root, name, store.UNIT_SOURCE_NAME)).read()
               for name in graph_units]
    op_units = {match.split("{")[0] for source in sources
                for match in re.findall(r"/\* (.*) \*/\nint sympile_op_", source)}
    assert op_units
    assert not op_units & served, op_units
    assert len(graph_units) - len(op_units) >= 1  # the Elemwise kernels


@requires_compiler
def test_lone_common_ops_compile_no_kernel(tier, tmp_path, monkeypatch):
    """The kernels of the lone elementwise ops of common_node_units are in the tier: a
    function of only such nodes (a new array, and one written over its input) compiles its
    main unit alone, and computes what numpy does."""
    import sympile
    import sympile.tensor as tt

    compiled = _record_compiles(monkeypatch, tier[0])
    x, y = tt.fmatrix("x"), tt.fmatrix("y")
    shared = sympile.shared(np.ones((2, 3), dtype="float32"))
    with config.change_flags(compiledir=str(tmp_path / "cache"), compile_async=False,
                             backend="c"):
        f = sympile.function([x, y], [tt.exp(x), x * y], updates=[(shared, -shared)])
        values = [np.arange(6, dtype="float32").reshape(2, 3) / 7, np.full((2, 3), 3, "f")]
        exp_x, product = f(*values)
    assert "unit.c" not in compiled and compiled.count("module.c") == 1, compiled
    np.testing.assert_allclose(exp_x, np.exp(values[0]), rtol=1e-6)
    np.testing.assert_array_equal(product, values[0] * values[1])
    np.testing.assert_array_equal(shared.get_value(), -np.ones((2, 3), dtype="float32"))


@requires_compiler
def test_common_op_nodes_compile_no_unit(tier, tmp_path, monkeypatch):
    """The op units of _common_op_nodes are in the tier, whatever the rank and axes: a
    function of reductions, arg-reductions, a join and the indexing of a classifier's and an
    embedding's step compiles its main unit alone, and computes what numpy does."""
    import sympile
    import sympile.tensor as tt

    compiled = _record_compiles(monkeypatch, tier[0])
    x, cube, labels = tt.dmatrix("x"), tt.dtensor3("cube"), tt.lvector("labels")
    outputs = [cube.sum(axis=(0, 2)), x.max(axis=1), tt.argmax(x, axis=1),
               tt.concatenate([x, x], axis=1), x[labels],
               x[tt.arange(labels.shape[0]), labels],
               tt.inc_subtensor(x[labels], tt.ones_like(x))]
    with config.change_flags(compiledir=str(tmp_path / "cache"), compile_async=False,
                             backend="c"):
        f = sympile.function([x, cube, labels], outputs)
        kinds = {type(node.op).__name__ for node in f.maker.fgraph.toposort()}
        x_value = np.arange(6.0).reshape(3, 2) ** 2 % 5
        cube_value = np.arange(24.0).reshape(2, 3, 4)
        label_values = np.array([1, 0, 1])
        results = f(x_value, cube_value, label_values)
    assert {"CAReduce", "Argmax", "Join", "AdvancedSubtensor1", "AdvancedSubtensor",
            "AdvancedIncSubtensor1", "ARange"} <= kinds, kinds
    assert "unit.c" not in compiled and compiled.count("module.c") == 1, compiled
    incremented = x_value.copy()
    np.add.at(incremented, label_values, 1.0)
    expected = [cube_value.sum(axis=(0, 2)), x_value.max(axis=1), x_value.argmax(axis=1),
                np.concatenate([x_value, x_value], axis=1), x_value[label_values],
                x_value[np.arange(3), label_values], incremented]
    for result, value in zip(results, expected):
        np.testing.assert_array_equal(result, value)


@requires_compiler
def test_a_tier_file_others_could_write_is_not_used(tier, tmp_path, monkeypatch):
    """As in the cache: a product another user could have replaced is compiled again (into
    the cache), never linked."""
    directory, keys = tier
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    platform = os.path.join(copy, store.platform_tag())
    program_key = next(key for key in keys[1:] if "sympile_run_program" in open(
        os.path.join(platform, key, store.UNIT_SOURCE_NAME)).read())
    product = os.path.join(platform, program_key, store.UNIT_OBJECT_NAME)
    os.chmod(product, os.stat(product).st_mode | stat.S_IWOTH)
    _, root, _ = _build_recording(tmp_path, monkeypatch, str(copy), 0.12)
    assert program_key in os.listdir(root)
    assert not set(keys) - {program_key} & set(os.listdir(root))


def test_keys_and_names_do_not_depend_on_where_the_package_lies(monkeypatch):
    """The #line marks of the package's C files name its directory: the tier is built in a
    build directory and installed elsewhere, and its keys must still match."""
    here = store._PACKAGE_DIR
    source = f'#line 1 "{here}tensor/blas/blas_dot.c"\nint f(void) {{ return 1; }}\n'
    moved = source.replace(here, "/elsewhere/site-packages/sympile/")
    key = store.compute_key(store.key_inputs(source, ("-O2",), "unit"))
    assert content_name("sympile_x", source) == content_name("sympile_x", moved)
    monkeypatch.setattr(store, "_PACKAGE_DIR", "/elsewhere/site-packages/sympile/")
    assert store.compute_key(store.key_inputs(moved, ("-O2",), "unit")) == key
    # The code itself still counts.
    changed = moved.replace("return 1", "return 2")
    assert store.compute_key(store.key_inputs(changed, ("-O2",), "unit")) != key
    assert content_name("sympile_x", changed) != content_name("sympile_x", moved)
