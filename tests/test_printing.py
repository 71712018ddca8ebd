"""debugprint and pp."""

import io

import pytest

import sympile
import sympile.tensor as T
from sympile.printing import debugprint, pp


def test_debugprint_tree_ids_and_types():
    x = T.dvector("x")
    y = T.exp(x) * x
    text = debugprint(y, file="str", print_type=True)
    lines = text.splitlines()
    # Theano's text: its op names, the output's name in quotes.
    assert lines[0].startswith("Elemwise{mul,no_inplace} [id A] ''")
    assert lines[1].startswith(" |Elemwise{exp,no_inplace} [id B] ''")
    assert lines[2].startswith(" | |x [id C]")
    assert lines[3].startswith(" |x [id C]")  # shared variables keep their id
    assert "TensorType(float64, vector)" in lines[0]


def test_debugprint_returns_as_theano(capsys):
    """None after printing to stdout, the stream when given one, the text for 'str'."""
    x = T.dvector("x")
    y = x + 1
    y.name = "y"
    assert debugprint(y) is None
    assert capsys.readouterr().out.startswith("Elemwise{add,no_inplace} [id A] 'y'")
    stream = io.StringIO()
    assert debugprint(y, file=stream) is stream
    with pytest.raises(ValueError, match="debugprint: file must be"):
        debugprint(y, file="out.txt")


def test_debugprint_repeated_node_printed_once():
    x = T.dvector("x")
    shared_part = T.exp(x)
    text = debugprint([shared_part + 1, shared_part * 2], file="str")
    assert text.count("exp,no_inplace} [id") == 2
    assert text.count(" |x [id") == 1


def test_debugprint_of_a_function_and_streams():
    x = T.dvector("x")
    f = sympile.function([x], x + 1)
    stream = io.StringIO()
    debugprint(f, file=stream)
    assert stream.getvalue().startswith("Elemwise{add,no_inplace} [id A]")
    with pytest.raises(TypeError, match="cannot print"):
        debugprint(42)


def test_pp_infix():
    x, y = T.dscalars("x", "y")
    assert pp(x ** 2 + y) == "((x ** 2.0) + y)"
    assert pp(-x) == "-x"
    assert pp(T.exp(x)) == "exp(x)"
    assert sympile.pp(x * y / 2) == "((x * y) / 2.0)"
    with pytest.raises(TypeError, match="expected a Variable"):
        pp(3)
