"""tools/theano_failures.py, the rules that explain each failure of Theano's tests against
sympile (tools/theano_tests.py reports them by kind)."""

from __future__ import annotations

import runpy
from pathlib import Path

RULES = runpy.run_path(str(Path(__file__).resolve().parent.parent / "tools" /
                           "theano_failures.py"))
classify = RULES["classify"]


def test_every_rule_has_a_kind_and_a_reason():
    for module, test, _cause, kind, reason in RULES["RULES"]:
        assert kind in RULES["KINDS"], (module, test)
        assert len(reason) > 20, (module, test)


def test_failures_are_matched_by_module_test_and_cause():
    basic = "tensor/tests/test_basic.py"
    assert classify(basic, "AddInplaceTester::test_good",
                    "TypeError: ('add_inplace: output N cannot be written over input N')")[0] \
        == "design"
    # The cause decides between two rules for the same test.
    assert classify(basic, "ExpTester::test_good",
                    "AssertionError: Test Elemwise{exp}::intN: Output N gave the wrong value")[0] \
        == "design"
    assert classify(basic, "ExpTester::test_good", "AssertionError: something else") is None
    # The first matching rule wins: the reduction dtypes before the module's catch-all.
    assert classify("tensor/tests/test_elemwise.py", "T_reduce_dtype::test_reduce_custom_dtype",
                    "AssertionError")[0] == "design"
    assert classify("tensor/tests/test_elemwise.py", "test_perform", "TypeError")[0] == \
        "internal"
    assert classify("sparse/tests/test_basic.py", "test_size", "no attribute 'size'")[0] == \
        "gap"
    assert classify("tests/not_a_module.py", "test_x", "") is None
