"""Run Theano 1.0.5's own unit tests against sympile and report how many pass (issue 36).

    python tools/theano_tests.py [--modules tensor/tests/test_basic.py ...] [--json out.json]

Fetches Theano's source with pip (`pip download theano==1.0.5`, cached in --workdir; no
Theano code is in this repository), and runs each test module in its own pytest process on
sympile's Python backend, `import theano` resolving to sympile through tools/theano_shim
(imports and test plumbing only: nose, numpy.testing.dec, theano.tests.unittest_tools).
Prints per-module counts, the failures by kind and reason (tools/theano_failures.py: every
failure is matched to a rule; those no rule explains are listed) and the most frequent
causes; needs pytest, six and parameterized (`pip install '.[theano-tests]'`). About 10 to
20 minutes on 2 cores. `--classify FILE` reclassifies an earlier run's --json FILE without running.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ElementTree

from theano_failures import KINDS, classify

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VERSION = "1.0.5"
# The user-level test modules: the tensor, nnet, pool, scan, ifelse, random, sparse,
# gradient and compile suites; Theano's internals (gof, optimizer tests, C linkers, GPU) are
# left out.
MODULES = [
    "tensor/tests/test_basic.py", "tensor/tests/test_elemwise.py",
    "tensor/tests/test_subtensor.py", "tensor/tests/test_extra_ops.py",
    "tensor/tests/test_sort.py", "tensor/tests/test_nlinalg.py",
    "tensor/tests/test_slinalg.py", "tensor/tests/test_blas.py", "tensor/tests/test_var.py",
    "tensor/tests/test_shared_randomstreams.py", "tensor/nnet/tests/test_nnet.py",
    "tensor/nnet/tests/test_sigm.py", "tensor/nnet/tests/test_conv.py",
    "tensor/nnet/tests/test_abstract_conv.py", "tensor/nnet/tests/test_bn.py",
    "tensor/signal/tests/test_pool.py", "scan_module/tests/test_scan.py",
    "tests/test_ifelse.py", "sandbox/tests/test_rng_mrg.py", "sparse/tests/test_basic.py",
    "tests/test_gradient.py", "compile/tests/test_function.py",
    "compile/tests/test_pfunc.py", "compile/tests/test_shared.py",
]

_CONFTEST = '''\
import sys
sys.path.insert(0, {tools!r})
import theano_shim
from theano_shim import pytest_pycollect_makeitem  # noqa: F401 - nose's test generators
theano_shim.install({theano_root!r})
'''


def fetch(workdir: str) -> str:
    """The directory of Theano's package in its extracted source distribution."""
    package = os.path.join(workdir, f"Theano-{VERSION}", "theano")
    if os.path.isdir(package):
        return package
    archive = os.path.join(workdir, f"Theano-{VERSION}.tar.gz")
    if not os.path.exists(archive):
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--no-binary", ":all:", f"theano=={VERSION}", "-d", workdir],
                       check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(workdir, filter="data")
    return package


def static_count(path: str) -> int:
    """The test functions and methods a module's source defines (`def test...` at its top
    level or in its classes): the size of a module that could not be imported."""
    tree = ast.parse(open(path).read())
    count = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            count += 1
        elif isinstance(node, ast.ClassDef):
            count += sum(isinstance(item, ast.FunctionDef) and item.name.startswith("test")
                         for item in node.body)
    return count


def run_module(module: str, theano_root: str, staging: str, timeout: int) -> dict:
    """Counts and failure messages of one Theano test module."""
    name = "test_" + module.replace("/tests/", "_").replace("/", "_")
    wrapper = os.path.join(staging, name)
    dotted = "theano." + module[:-3].replace("/", ".")
    with open(wrapper, "w") as handle:
        handle.write(f"from {dotted} import *  # noqa: F403\n")
    report = os.path.join(staging, name + ".xml")
    environment = dict(os.environ, SYMPILE_FLAGS="backend=python",
                       PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    environment.pop("THEANO_FLAGS", None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-p", "no:randomly", "--rootdir", staging, f"--junitxml={report}", wrapper]
    try:
        completed = subprocess.run(command, cwd=staging, env=environment, timeout=timeout,
                                   capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        return {"module": module, "error": f"timed out after {timeout} s"}
    if not os.path.exists(report):
        return {"module": module, "error": completed.stdout[-2000:] + completed.stderr[-2000:]}
    counts = collections.Counter()
    causes, failures = [], []
    cases = list(ElementTree.parse(report).getroot().iter("testcase"))
    if len(cases) == 1 and not cases[0].get("classname"):
        # The module did not import: one collection error stands for all its tests.
        outcome = next(iter(cases[0]))
        return {"module": module, "unimported": static_count(
            os.path.join(theano_root, module)), "causes": [_cause(
                outcome.get("message") or "", outcome.text or "")]}
    for case in cases:
        outcome = next((child for child in case if child.tag in ("failure", "error",
                                                                 "skipped")), None)
        if outcome is None:
            counts["passed"] += 1
        elif outcome.tag == "skipped":
            counts["skipped"] += 1
        else:
            counts["failed"] += 1
            cause = _cause(outcome.get("message") or "", outcome.text or "")
            causes.append(cause)
            failures.append({"test": _test_id(case), "cause": cause})
    return {"module": module, **counts, "causes": causes, "failures": failures}


def _test_id(case: ElementTree.Element) -> str:
    """`Class::method` (or the function's name) of one junit test case, without the
    wrapper module's name."""
    classname = case.get("classname") or ""
    owner = classname.rsplit(".", 1)[-1] if "." in classname else ""
    return f"{owner}::{case.get('name')}" if owner and not owner.startswith("test_") \
        else case.get("name") or ""


def _cause(message: str, text: str) -> str:
    """A failure reduced to its kind: the missing module or name, or the exception type
    and the start of its text. A module that fails to import is one failure whose cause is
    the traceback's exception line."""
    raised = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    if message in ("", "collection failure") and raised:
        message = "collecting: " + raised[-1]
    message = message.strip().splitlines()[0] if message.strip() else "no message"
    for pattern in (r"No module named '([\w.]+)'",
                    r"module '([\w.]+)' has no attribute '(\w+)'",
                    r"cannot import name '(\w+)' from '([\w.]+)'",
                    r"'(\w+)' object has no attribute '(\w+)'",
                    r"got an unexpected keyword argument '(\w+)'"):
        found = re.search(pattern, message)
        if found:
            return found.group(0)
    return re.sub(r"0x[0-9a-f]+|\d+(\.\d+)?", "N", message)[:120]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="*", default=MODULES,
                        help="Theano test files, relative to its package directory")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(),
                                                          "sympile-theano-tests"))
    parser.add_argument("--timeout", type=int, default=900, help="seconds per module")
    parser.add_argument("--json", help="write the counts and causes here")
    parser.add_argument("--classify", metavar="JSON",
                        help="classify the failures of an earlier run's JSON, run nothing")
    arguments = parser.parse_args()
    if arguments.classify:
        with open(arguments.classify) as handle:
            _report_kinds(json.load(handle)["modules"])
        return 0
    os.makedirs(arguments.workdir, exist_ok=True)
    theano_root = fetch(arguments.workdir)
    staging = tempfile.mkdtemp(prefix="run-", dir=arguments.workdir)
    with open(os.path.join(staging, "conftest.py"), "w") as handle:
        handle.write(_CONFTEST.format(tools=os.path.join(ROOT, "tools"),
                                      theano_root=theano_root))
    results, totals, causes = [], collections.Counter(), collections.Counter()
    print(f"{'module':48} {'passed':>7} {'failed':>7} {'skipped':>7}  (not imported: tests "
          f"in its source)")
    for module in arguments.modules:
        result = run_module(module, theano_root, staging, arguments.timeout)
        results.append(result)
        if "error" in result:
            print(f"{module:48} did not run: {result['error'].strip()[-300:]}")
            continue
        for key in ("passed", "failed", "skipped", "unimported"):
            totals[key] += result.get(key, 0)
        causes.update(result["causes"])
        if "unimported" in result:
            print(f"{module:48} not imported ({result['unimported']} tests): "
                  f"{result['causes'][0]}", flush=True)
            continue
        print(f"{module:48} {result.get('passed', 0):7} {result.get('failed', 0):7} "
              f"{result.get('skipped', 0):7}", flush=True)
    run = totals["passed"] + totals["failed"]
    print(f"{'total':48} {totals['passed']:7} {totals['failed']:7} {totals['skipped']:7}")
    whole = run + totals["unimported"]
    print(f"passed {totals['passed']} of {run} run ({100 * totals['passed'] / max(run, 1):.1f}%); "
          f"with the {totals['unimported']} tests of the modules that did not import, "
          f"{totals['passed']} of {whole} ({100 * totals['passed'] / max(whole, 1):.1f}%)")
    kinds = _report_kinds(results)
    print("\nmost frequent causes of failure:")
    for cause, count in causes.most_common(40):
        print(f"{count:6}  {cause}")
    if arguments.json:
        with open(arguments.json, "w") as handle:
            json.dump({"totals": totals, "kinds": kinds, "modules": results}, handle, indent=1)
    return 0


def _report_kinds(results: list[dict]) -> collections.Counter:
    """Print the failures by kind and reason, and those no rule explains."""
    kinds, unexplained = _classify(results)
    print("\nfailures by kind (tools/theano_failures.py):")
    for kind in (*KINDS, "unclassified"):
        print(f"{kinds[kind]:6}  {kind}")
    for reason, count in sorted(kinds.items(), key=lambda item: -item[1]):
        if reason not in (*KINDS, "unclassified"):
            print(f"{count:6}  {reason}")
    for module, test, cause in unexplained:
        print(f"  unclassified: {module} {test}: {cause}")
    return kinds


def _classify(results: list[dict]) -> tuple[collections.Counter, list[tuple[str, str, str]]]:
    """Counts of the failures by kind and by `kind: reason`, each failure's kind and reason
    recorded in it, and the failures no rule explains."""
    kinds, unexplained = collections.Counter(), []
    for result in results:
        for failure in result.get("failures", []):
            found = classify(result["module"], failure["test"], failure["cause"])
            if found is None:
                kinds["unclassified"] += 1
                unexplained.append((result["module"], failure["test"], failure["cause"]))
                continue
            failure["kind"], failure["reason"] = found
            kinds[found[0]] += 1
            kinds[f"{found[0]}: {result['module']}: {found[1]}"] += 1
    return kinds, unexplained


if __name__ == "__main__":
    sys.exit(main())
