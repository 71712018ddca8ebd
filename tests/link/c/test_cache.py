"""The on-disk compile cache (sympile.cache) and the compiler driver (sympile.link.c.cmodule)."""

import errno
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import numpy as np
import pytest

import sympile.tensor as tt
from sympile import function
from sympile.cache import store
from sympile.compile.mode import Mode
from sympile.config import config
from sympile.graph.rewriting.db import RewriteQuery
from sympile.link.c import cmodule, prelude
from sympile.link.c.linker import CVM
from tests.link.c.utils import compile_c, requires_compiler

pytestmark = requires_compiler

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def module_source(value: int) -> str:
    """A minimal module like the backend's: a Program attribute and a marker that makes each
    test's source (hence key and .so path) unique, since glibc will not reload a loaded path."""
    marker = uuid.uuid4().hex
    return textwrap.dedent(f"""
        #include <Python.h>
        static struct PyModuleDef definition = {{
            PyModuleDef_HEAD_INIT, SYMPILE_MODULE_NAME, NULL, -1, NULL
        }};
        PyMODINIT_FUNC SYMPILE_PYINIT(void)
        {{
            PyObject *module = PyModule_Create(&definition);
            if (module == NULL)
                return NULL;
            PyModule_AddIntConstant(module, "Program", {value});
            PyModule_AddStringConstant(module, "marker", "{marker}");
            return module;
        }}
        """)


@pytest.fixture
def compiledir(tmp_path):
    with config.change_flags(compiledir=str(tmp_path)):
        yield tmp_path


@pytest.fixture
def compile_count(monkeypatch):
    """Counts compiler runs (calls of subprocess.run other than `--version`)."""
    calls = []
    original = subprocess.run

    def counting_run(command, *args, **kwargs):
        if "--version" not in command:
            calls.append(command)
        return original(command, *args, **kwargs)

    monkeypatch.setattr(store.subprocess, "run", counting_run)
    return calls


def entry_directory(source, flags):
    key = store.compute_key(store.key_inputs(source, flags))
    return key, os.path.join(store.cache_root(), key)


def test_cold_build_then_disk_hit_then_memo(compiledir, compile_count):
    source = module_source(7)
    flags = cmodule.compile_flags()
    key, library, compiled = store.build(source, flags)
    assert compiled and len(compile_count) == 1
    assert library.startswith(str(compiledir)) and os.path.isfile(library)
    directory = os.path.dirname(library)
    assert sorted(os.listdir(directory)) == sorted(
        ["lock", "meta.json", "module.c", os.path.basename(library)])
    meta = json.load(open(os.path.join(directory, "meta.json")))
    assert meta["key"] == key and meta["library_size"] == os.path.getsize(library)
    assert meta["inputs"]["flags"] == list(flags)

    assert store.build(source, flags)[2] is False
    module = cmodule.load_module(source)
    assert module.Program == 7 and module.__sympile_build__["cache_hit"] is True
    again = cmodule.load_module(source)
    assert again is module and again.__sympile_build__["cache_hit"] is True
    assert len(compile_count) == 1


def test_first_load_reports_a_miss(compiledir, compile_count):
    module = cmodule.load_module(module_source(3))
    build = module.__sympile_build__
    assert build["cache_hit"] is False and build["compile_s"] > 0 and build["load_s"] >= 0
    assert len(compile_count) == 1


def test_key_changes_with_flags_and_source(compiledir):
    source = module_source(1)
    plain = store.compute_key(store.key_inputs(source, cmodule.compile_flags()))
    assert plain == store.compute_key(store.key_inputs(source, cmodule.compile_flags()))
    assert plain != store.compute_key(store.key_inputs(source, cmodule.compile_flags(True)))
    assert plain != store.compute_key(
        store.key_inputs(source, cmodule.compile_flags(extra_flags=("-g",))))
    assert plain != store.compute_key(store.key_inputs(source + "\n", cmodule.compile_flags()))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_corrupt_library_is_rebuilt(compiledir, compile_count, damage):
    source = module_source(11)
    _, library, _ = store.build(source, cmodule.compile_flags())
    size = os.path.getsize(library)
    with open(library, "r+b") as stream:
        if damage == "truncate":
            stream.truncate(size // 2)
        elif damage == "garbage":
            stream.seek(size // 3)
            stream.write(b"\xde\xad\xbe\xef" * 64)
        else:
            stream.truncate(0)
    assert not store.entry_is_valid(os.path.dirname(library), os.path.basename(
        os.path.dirname(library)))
    module = cmodule.load_module(source)
    assert module.Program == 11 and module.__sympile_build__["cache_hit"] is False
    assert len(compile_count) == 2


@pytest.mark.parametrize("damage", ["other_inputs", "unreadable", "missing"])
def test_stale_metadata_is_rebuilt(compiledir, compile_count, damage):
    source = module_source(13)
    flags = cmodule.compile_flags()
    _, library, _ = store.build(source, flags)
    meta_path = os.path.join(os.path.dirname(library), "meta.json")
    if damage == "other_inputs":
        meta = json.load(open(meta_path))
        meta["inputs"]["numpy"] = "0.0.1"
        json.dump(meta, open(meta_path, "w"))
    elif damage == "unreadable":
        open(meta_path, "w").write("{not json")
    else:
        os.unlink(meta_path)
    assert store.build(source, flags)[2] is True
    assert cmodule.load_module(source).Program == 13
    assert len(compile_count) == 2


def test_two_processes_compile_the_same_new_source(compiledir):
    source = module_source(17)
    source_path = compiledir / "source.c"
    source_path.write_text(source)
    program = textwrap.dedent(f"""
        from sympile.link.c import cmodule
        module = cmodule.load_module(open({str(source_path)!r}).read())
        print(module.Program, module.__sympile_build__["cache_hit"])
        """)
    environment = dict(os.environ, SYMPILE_FLAGS=f"compiledir={compiledir},compile_async=False")
    processes = [subprocess.Popen([sys.executable, "-c", program], cwd=REPOSITORY,
                                  env=environment, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [process.communicate(timeout=120) for process in processes]
    for process, (_stdout, stderr) in zip(processes, results):
        assert process.returncode == 0, stderr
    outputs = sorted(stdout.split() for stdout, _ in results)
    assert [value for value, _ in outputs] == ["17", "17"]
    # One of the two compiled; the other waited on the lock and found the entry.
    assert sorted(hit for _, hit in outputs) == ["False", "True"]
    _, directory = entry_directory(source, cmodule.compile_flags())
    assert store.entry_is_valid(directory, os.path.basename(directory))
    assert not [name for name in os.listdir(directory) if name.startswith(".tmp-")]


def test_a_training_step_gets_the_same_main_unit_in_every_process():
    """The same program, run twice, generates the same C (hence finds its module in the disk
    cache): no order of the generated code may come from object ids (sets of nodes)."""
    program = textwrap.dedent("""
        import hashlib
        import numpy as np
        import sympile, sympile.tensor as T
        rng = np.random.default_rng(0)
        shapes = [(20, 30), (30,), (30, 5), (5,)]
        params = [sympile.shared(rng.normal(size=s).astype("float32")) for s in shapes]
        x = sympile.shared(rng.normal(size=(10, 20)).astype("float32"))
        y = sympile.shared(rng.integers(0, 5, 10))
        h = T.tanh(T.dot(x, params[0]) + params[1])
        p = T.nnet.softmax(T.dot(h, params[2]) + params[3])
        cost = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
        g = sympile.grad(cost, params)
        f = sympile.function([], cost, updates=[(q, q - 0.01 * d) for q, d in zip(params, g)])
        print(hashlib.sha256(f._vm.plan.source.encode()).hexdigest())
        """)
    digests = set()
    for _ in range(3):
        result = subprocess.run([sys.executable, "-c", program], cwd=REPOSITORY,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        digests.add(result.stdout.split()[-1])
    assert len(digests) == 1


def run_cli(compiledir, *arguments, module=True):
    environment = dict(os.environ, SYMPILE_FLAGS=f"compiledir={compiledir},compile_async=False")
    command = ([sys.executable, "-W", "error", "-m", "sympile.cache"] if module
               else [sys.executable, "-c", "import sys; from sympile.cache.cli import main; "
                     "sys.exit(main(sys.argv[1:]))"]) + list(arguments)
    result = subprocess.run(command, cwd=REPOSITORY, env=environment, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


def test_cli_list_size_clear(compiledir):
    keys = sorted(store.build(module_source(value), cmodule.compile_flags())[0]
                  for value in (1, 2))
    listing = run_cli(compiledir, "list")
    listed = sorted(line.split()[0] for line in listing.splitlines()[:-1])
    assert listed == keys and "invalid" not in listing
    assert listing.splitlines()[-1].startswith("2 entries")
    expected = store.total_size()
    assert expected > 0
    assert run_cli(compiledir, "size", module=False).split()[0] == str(expected)
    assert run_cli(compiledir, "clear").startswith("removed 2 entries")
    assert store.list_entries() == [] and store.total_size() == 0
    assert run_cli(compiledir, "size").split()[0] == "0"


def test_cli_rejects_an_unknown_command(compiledir):
    result = subprocess.run([sys.executable, "-m", "sympile.cache", "purge"], cwd=REPOSITORY,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "invalid choice" in result.stderr


def test_entry_rebuilt_after_clear(compiledir, compile_count):
    source = module_source(19)
    store.build(source, cmodule.compile_flags())
    assert store.clear() == 1
    assert cmodule.load_module(source).Program == 19
    assert len(compile_count) == 2


def test_compile_error_message(compiledir):
    source = module_source(23) + "\nthis is not C;\n"
    with pytest.raises(cmodule.CompileError) as info:
        cmodule.load_module(source)
    message = str(info.value)
    assert "C compilation failed" in message and "error" in message
    assert "command: " in message and "config.backend = 'python'" in message
    kept = message.rsplit("source kept at ", 1)[1].splitlines()[0].strip()
    first, _, rest = source.partition("\n")
    kept_lines = open(kept).read().split("\n")
    # The module's names are #defined after its first line.
    assert kept_lines[0] == first and "\n".join(kept_lines[3:]) == rest
    assert kept_lines[1].startswith("#define SYMPILE_PYINIT PyInit_sympile_")
    _, directory = entry_directory(source, cmodule.compile_flags())
    assert not store.entry_is_valid(directory, os.path.basename(directory))


def test_missing_compiler_is_a_compile_error(compiledir):
    with config.change_flags(cxx="no-such-compiler-sympile"):
        with pytest.raises(cmodule.CompileError, match="no usable C compiler"):
            cmodule.load_module(module_source(29))


def test_the_compiler_is_asked_its_version_once_per_cache(compiledir, monkeypatch, tmp_path):
    """compiler_identity's record in the cache root stands for `--version` in a new process
    (here: its memo cleared) until the compiler file changes."""
    compiler = tmp_path / "bin" / "cc-sympile"
    compiler.parent.mkdir()
    real = shutil.which(config.cxx)
    compiler.write_text(f"#!/bin/sh\nexec {real} \"$@\"\n")
    compiler.chmod(0o755)
    asked = []
    original = subprocess.run

    def counting_run(command, *args, **kwargs):
        if "--version" in command:
            asked.append(command[0])
        return original(command, *args, **kwargs)

    monkeypatch.setattr(store.subprocess, "run", counting_run)
    with config.change_flags(cxx=str(compiler)):
        store.compiler_identity.cache_clear()
        first = store.compiler_identity(str(compiler))
        store.compiler_identity.cache_clear()
        assert store.compiler_identity(str(compiler)) == first and len(asked) == 1
        assert "Free Software Foundation" in first[1] or "clang" in first[1]
        # A replaced compiler is asked again.
        compiler.write_text(f"#!/bin/sh\n# v2\nexec {real} \"$@\"\n")
        store.compiler_identity.cache_clear()
        assert store.compiler_identity(str(compiler)) == first and len(asked) == 2
        # A record another user could have written is ignored.
        os.chmod(os.path.join(store.cache_root(), store.COMPILERS_NAME), 0o666)
        store.compiler_identity.cache_clear()
        store.compiler_identity(str(compiler))
        assert len(asked) == 3
    store.compiler_identity.cache_clear()


def test_function_warm_compile_hits_the_cache(compiledir):
    x = tt.dvector("x")
    marker = float(int(uuid.uuid4().int % 1000) + 2)
    mode = Mode(RewriteQuery(include=("fast_run",)), backend="c")
    first = function([x], tt.exp(x) * marker, mode=mode)
    second = function([x], tt.exp(x) * marker, mode=mode)
    values = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(first(values), np.exp(values) * marker)
    np.testing.assert_allclose(second(values), np.exp(values) * marker)
    assert first._vm.build_times["cache_hit"] is False
    assert second._vm.build_times["cache_hit"] is True


def test_clear_waits_for_a_load_between_build_and_import(compiledir, compile_count,
                                                         monkeypatch):
    """A clear (another process's, or thread's) cannot remove an entry between its build and
    its import: it waits for the load to finish."""
    source = module_source(31)
    original = store._import_library
    events = []

    def import_while_clearing(key, library):
        clearing = threading.Thread(target=lambda: events.append(("cleared", store.clear())))
        clearing.start()
        clearing.join(timeout=0.5)
        events.append(("imported", clearing.is_alive()))
        return original(key, library)

    monkeypatch.setattr(store, "_import_library", import_while_clearing)
    assert cmodule.load_module(source).Program == 31
    deadline = time.time() + 30
    while len(events) < 2 and time.time() < deadline:
        time.sleep(0.01)
    assert events == [("imported", True), ("cleared", 1)]
    assert len(compile_count) == 1


def _compiled_files(commands) -> list[str]:
    """The source each compiler run compiled; 'link' for a run that only links objects."""
    return sorted(next((os.path.basename(part) for part in command
                        if part.endswith((".c", ".h"))), "link") for command in commands)


def test_functions_share_the_compiled_units_of_their_ops(compiledir, compile_count):
    """Each op's C is a unit compiled once: a second function of the same ops on the same
    types compiles only its own main unit, in one compiler run that also links; a third with
    one new op, that op and its main unit. The units of one module compile in parallel and
    link into it."""
    x = tt.dmatrix("x")
    first = compile_c([x], [tt.exp(x).sum(axis=0), x.T])
    files = _compiled_files(compile_count)
    # header (precompiled), program unit, two op units (exp+sum may fuse: at least two), module
    assert files.count("module.c") == 1 and files.count(prelude.UNIT_HEADER_NAME) == 1
    assert files.count("unit.c") >= 3 and files.count("link") == 1
    compile_count.clear()
    y = tt.dmatrix("y")
    second = compile_c([y], [y.T, tt.exp(y).sum(axis=0)])
    assert _compiled_files(compile_count) == ["module.c"]
    compile_count.clear()
    third = compile_c([y], [tt.exp(y).sum(axis=0), y.T, tt.argmax(y, axis=1)])
    assert _compiled_files(compile_count) == ["link", "module.c", "unit.c"]
    value = np.arange(6.0).reshape(2, 3)
    for compiled, order in ((first, 1), (second, -1), (third, 1)):
        results = compiled(value)[::order]
        np.testing.assert_allclose(results[0], np.exp(value).sum(axis=0))
        np.testing.assert_array_equal(results[1], value.T)
    np.testing.assert_array_equal(third(value)[2], [2, 2])


def test_same_graph_with_several_constants_hits_the_cache(compiledir, compile_count):
    """Equal graphs get equal cells (constants in the order nodes read them), so the second
    function's main unit is the first's cache entry."""
    numbers = (40, 3, 4, 5, 2, 7)

    def build(creation_order):
        # Constants created in another order sit elsewhere in memory, so a set of the graph's
        # variables iterates them in another order.
        made = {value: tt.constant(value, dtype="int64") for value in creation_order}
        forty, three, four, five, two, seven = (made[value] for value in numbers)
        x = tt.dvector("x")
        n = tt.lscalar("n")
        outputs = [tt.arange(n, forty, three), tt.alloc(x, four, x.shape[0]),
                   tt.arange(five, n, two), tt.arange(seven, forty, n)]
        return compile_c([x, n], outputs)
    first = build(numbers)
    compile_count.clear()
    second = build(numbers[::-1])
    assert compile_count == []
    assert second._vm.build_times["cache_hit"] is True
    values = np.linspace(-2, 12, 5)
    for compiled in (first, second):
        results = compiled(values, 9)
        np.testing.assert_array_equal(results[0], np.arange(9, 40, 3))
        np.testing.assert_array_equal(results[1], np.tile(values, (4, 1)))
        np.testing.assert_array_equal(results[2], np.arange(5, 9, 2))
        np.testing.assert_array_equal(results[3], np.arange(7, 40, 9))


def test_main_unit_compiled_at_its_own_optimization(compiledir, compile_count):
    """Op units get OPTIMIZATION; the main unit (glue) MAIN_UNIT_OPTIMIZATION, which also links
    it; a -O in config.cxxflags comes last and overrides both."""
    x = tt.dvector("x")
    compiled = compile_c([x], tt.exp(x) * float(uuid.uuid4().int % 1000 + 2))
    assert compiled._vm.build_times["cache_hit"] is False
    by_file = {}
    for command in compile_count:
        by_file.setdefault(_compiled_files([command])[0], []).append(command)
    assert set(by_file) == {prelude.UNIT_HEADER_NAME, "unit.c", "module.c", "link"}
    for name, commands in by_file.items():
        expected = (cmodule.MAIN_UNIT_OPTIMIZATION if name in ("module.c", "link")
                    else cmodule.OPTIMIZATION)
        for command in commands:
            assert [part for part in command if part.startswith("-O")] == [expected]
    compile_count.clear()
    with config.change_flags(cxxflags="-O0"):
        compile_c([x], tt.exp(x) * 3.0)
    assert compile_count and all(
        [part for part in command if part.startswith("-O")][-1] == "-O0"
        for command in compile_count)


def test_unit_compile_error_leaves_no_module(compiledir):
    """A unit the compiler rejects is a CompileError naming its kept source; the module entry
    holds no product, metadata or temporary file, and a later build of good units works."""
    flags = cmodule.compile_flags()
    header = (prelude.UNIT_HEADER_NAME, prelude.UNIT_HEADER)
    main = f'#include "{prelude.UNIT_HEADER_NAME}"\n' + module_source(37)
    bad = f'#include "{prelude.UNIT_HEADER_NAME}"\nint sympile_bad(void) {{ return nope; }}\n'
    good = f'#include "{prelude.UNIT_HEADER_NAME}"\nint sympile_good_{uuid.uuid4().hex}(void) ' \
           '{ return 1; }\n'
    with pytest.raises(cmodule.CompileError, match="C compilation failed") as info:
        store.build(main, flags, (good, bad), header)
    kept = str(info.value).rsplit("source kept at ", 1)[1].splitlines()[0].strip()
    assert open(kept).read() == bad
    modules = [entry for entry in store.list_entries()
               if os.path.exists(os.path.join(entry.path, store.SOURCE_NAME))]
    assert len(modules) == 1 and not modules[0].valid
    assert sorted(os.listdir(modules[0].path)) == ["lock", store.SOURCE_NAME]
    key, library, compiled = store.build(main, flags, (good,), header)
    assert compiled and store.entry_is_valid(os.path.dirname(library), key)
    assert store._import_library(key, library).Program == 37


def test_two_processes_compile_the_same_new_function(compiledir):
    """Units, header and module built by two processes at once: both get the right values,
    one compiled the module, the other found it on disk."""
    marker = uuid.uuid4().int % 1000 + 2
    program = textwrap.dedent(f"""
        import numpy as np
        import sympile.tensor as tt
        from tests.link.c.utils import compile_c
        x = tt.dmatrix("x")
        compiled = compile_c([x], [tt.tanh(x).sum(axis=1) * {marker}.0, x.T + 1.0])
        value = np.arange(6.0).reshape(2, 3)
        first, second = compiled(value)
        assert np.allclose(first, np.tanh(value).sum(axis=1) * {marker})
        assert np.array_equal(second, value.T + 1.0)
        print(compiled._vm.build_times["cache_hit"])
        """)
    environment = dict(os.environ, SYMPILE_FLAGS=f"compiledir={compiledir},compile_async=False")
    processes = [subprocess.Popen([sys.executable, "-c", program], cwd=REPOSITORY,
                                  env=environment, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [process.communicate(timeout=300) for process in processes]
    for process, (_, stderr) in zip(processes, results):
        assert process.returncode == 0, stderr
    assert sorted(stdout.split()[-1] for stdout, _ in results) == ["False", "True"]
    entries = store.list_entries()
    assert entries and all(entry.valid for entry in entries)
    assert not [name for entry in entries for name in os.listdir(entry.path)
                if name.startswith(".tmp-")]


# -- robustness (issue 18) ----------------------------------------------------------------

def test_clear_while_another_process_compiles(compiledir):
    """Clearing never breaks a running build: it waits for the build, which then loads."""
    program = textwrap.dedent(f"""
        import numpy as np
        import sympile.tensor as tt
        from tests.link.c.utils import compile_c
        x = tt.dvector("x")
        for marker in range(2, 8):
            f = compile_c([x], [tt.tanh(x) * float(marker + {uuid.uuid4().int % 10 ** 6})])
            f(np.ones(3))
        print("done")
        """)
    environment = dict(os.environ, SYMPILE_FLAGS=f"compiledir={compiledir},compile_async=False")
    process = subprocess.Popen([sys.executable, "-c", program], cwd=REPOSITORY,
                               env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    cleared = 0
    while process.poll() is None:
        cleared += store.clear()
        time.sleep(0.05)
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0 and "done" in stdout, stderr


def _damage_and_reload(compiledir, damage):
    source = module_source(41)
    assert cmodule.load_module(source).Program == 41
    key, directory = entry_directory(source, cmodule.compile_flags())
    store._loaded.clear()
    damage(directory)
    assert cmodule.load_module(source).Program == 41


@pytest.mark.parametrize("damage", [
    pytest.param(lambda d: (os.unlink(os.path.join(d, store.META_NAME)),
                            os.mkdir(os.path.join(d, store.META_NAME))), id="meta-is-a-dir"),
    pytest.param(lambda d: (os.unlink(os.path.join(d, store.LOCK_NAME)),
                            os.mkdir(os.path.join(d, store.LOCK_NAME)),
                            os.unlink(os.path.join(d, store.META_NAME))), id="lock-is-a-dir"),
    pytest.param(lambda d: (subprocess.run(["rm", "-rf", d], check=True),
                            open(d, "w").close()), id="entry-is-a-file"),
    pytest.param(lambda d: (subprocess.run(["rm", "-rf", os.path.dirname(d)], check=True),
                            open(os.path.dirname(d), "w").close()), id="platform-is-a-file"),
])
def test_damaged_cache_is_rebuilt(compiledir, damage):
    _damage_and_reload(compiledir, damage)


def test_unusable_cache_falls_back_to_a_private_one(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setattr(store, "_private_dirs", {})
    with config.change_flags(compiledir=str(blocker)):
        with pytest.warns(UserWarning, match="private temporary cache"):
            assert cmodule.load_module(module_source(43)).Program == 43
        assert cmodule.load_module(module_source(44)).Program == 44  # warned once
        assert not store.cache_root().startswith(str(blocker))


def test_read_only_cache_falls_back_to_a_private_one(compiledir, monkeypatch):
    monkeypatch.setattr(store, "_private_dirs", {})
    original = os.open

    def read_only(path, *args, **kwargs):
        if str(path).startswith(str(compiledir)):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return original(path, *args, **kwargs)

    monkeypatch.setattr(store.os, "open", read_only)
    with pytest.warns(UserWarning, match="Read-only file system"):
        assert cmodule.load_module(module_source(45)).Program == 45


def disk_full_compiler(tmp_path, when: str) -> str:
    """gcc behind a script that fails as a full disk makes it (gcc's message) for the
    commands whose arguments match the shell pattern `when`."""
    script = tmp_path / "full-disk-cc"
    script.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        case "$*" in {when})
            echo "sympile_unit.h:1: fatal error: cannot write PCH file: No space left on device" >&2
            exit 1;;
        esac
        exec gcc "$@"
        """))
    script.chmod(0o755)
    return str(script)


def test_a_precompiled_header_that_does_not_fit_is_done_without(compiledir, tmp_path):
    x = tt.dvector("x")
    with config.change_flags(cxx=disk_full_compiler(tmp_path, "*c-header*")):
        with pytest.warns(UserWarning, match="precompiled header .* does not fit"):
            f = compile_c([x], tt.exp(x) * 2.5 + 1.0)
        assert isinstance(f._vm, CVM)
        np.testing.assert_allclose(f(np.zeros(3)), [3.5] * 3)
        assert not list(compiledir.rglob("*.gch"))


def test_a_compiler_on_a_full_disk_moves_to_a_private_cache_then_says_so(compiledir, tmp_path,
                                                                         monkeypatch):
    monkeypatch.setattr(store, "_private_dirs", {})
    x = tt.dvector("x")
    with config.change_flags(cxx=disk_full_compiler(tmp_path, "*")):
        with pytest.warns(UserWarning, match="private temporary cache"), \
                pytest.raises(cmodule.CompileError, match="No space left on device"):
            compile_c([x], tt.exp(x) * 3.5 + 1.0)


def test_a_compiler_that_writes_nothing_leaves_no_entry(compiledir):
    source = module_source(47)
    with config.change_flags(cxx="true"):
        with pytest.raises(cmodule.CompileError, match="wrote no valid shared library"):
            cmodule.load_module(source)
        assert not any(entry.valid for entry in store.list_entries())
    assert cmodule.load_module(source).Program == 47


def test_bad_flags_give_the_compilers_message_and_the_command(compiledir):
    with pytest.raises(cmodule.CompileError) as info:
        cmodule.load_module(module_source(49), extra_flags=("-fno-such-flag-sympile",))
    message = str(info.value)
    assert "-fno-such-flag-sympile" in message.split("command:")[0]  # the compiler's words
    assert "command: " in message and "backend = 'python'" in message


def test_cli_verify_and_prune(compiledir, capsys):
    from sympile.cache import cli
    for value in (51, 52, 53):
        cmodule.load_module(module_source(value))
    entries = store.list_entries()
    with open(os.path.join(entries[0].path, store.META_NAME), "w") as stream:
        stream.write("{}")
    assert cli.main(["verify"]) == 0
    assert "removed 1 bad ones" in capsys.readouterr().out
    assert len(store.list_entries()) == len(entries) - 1
    assert cli.main(["prune", "--max-size", "0"]) == 0
    assert store.list_entries() == []
    assert cli.main(["prune", "--older-than", "30d"]) == 0
    with pytest.raises(SystemExit):
        cli.main(["prune"])
    with pytest.raises(SystemExit):
        cli.main(["list", "--max-size", "1G"])
    with pytest.raises(SystemExit):
        cli.main(["prune", "--older-than", "soon"])
