"""Generated code built with -fsanitize=address runs a few graphs clean (including error
paths: a bad input, a failing node)."""

from __future__ import annotations

import textwrap

import pytest

from tests.link.c.utils import assert_clean_under_address_sanitizer, requires_compiler

SCRIPT = textwrap.dedent("""
    import numpy as np
    import pytest
    import sympile.tensor as T
    from tests.link.c.test_linker import AddOne, add_one
    from tests.link.c.utils import compile_c

    x, y = T.dmatrix("x"), T.dvector("y")
    m = T.fmatrix("m")
    outputs = [add_one(x), T.exp(x) * 2 + y, (x * y).sum(axis=1), x.T[1:, ::-1] + 1,
               T.dot(x, y), T.dot(m, m.T), T.maximum(x, 0).max(axis=1), x.reshape((-1,)),
               T.cast(x > 0, "int32").sum()]
    f = compile_c([x, y, m], outputs)
    ran_c = len(f._vm.nodes) - len(f._vm.fallback_nodes)
    assert ran_c >= 1, "no node ran C code"
    rng = np.random.default_rng(0)
    for shape in [(3, 4), (1, 4), (0, 4), (7, 4)]:
        values = [rng.standard_normal(shape), rng.standard_normal(4),
                  rng.standard_normal(shape).astype("float32")]
        f(*values)
    f.trust_input = True
    with pytest.raises(TypeError):
        f(np.zeros((2, 3)), np.zeros(3, dtype="float32"), np.zeros((2, 2), dtype="float32"))
    g = compile_c([x], AddOne(limit=2)(x))
    with pytest.raises(ValueError, match="at most 2"):
        g(np.zeros((3, 3)))
    print("clean", ran_c)
""")


@requires_compiler
@pytest.mark.slow
def test_generated_code_is_clean_under_address_sanitizer():
    assert_clean_under_address_sanitizer(SCRIPT)
