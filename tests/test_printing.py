"""debugprint and pp."""

import io
import shutil
import xml.dom.minidom

import numpy as np
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


def _model():
    x = T.dvector("x")
    w = sympile.shared(np.ones(2), "w")
    y = (T.exp(x) * w + 1).sum()
    return sympile.function([x], [y, T.exp(x)], mode="FAST_COMPILE")


def test_pydotprint_dot_source_and_images(tmp_path):
    pytest.importorskip("graphviz")
    from sympile.printing import pydotprint
    source = pydotprint(_model(), format="dot", return_image=True).decode()
    assert source.startswith("digraph sympile {")
    assert 'label="Elemwise{exp,no_inplace}"' in source and "shape=ellipse" in source
    assert "label=\"x TensorType(float64, vector)\" fillcolor=limegreen" in source  # inputs
    assert "label=\"w TensorType(float64, vector)\" fillcolor=cyan" in source  # shared
    assert "fillcolor=dodgerblue" in source  # outputs blue
    assert source.count("->") == 8
    simple = pydotprint(_model(), format="dot", return_image=True,
                        var_with_name_simple=True).decode()
    assert "label=x fillcolor=limegreen" in simple
    outfile = tmp_path / "graph.dot"
    pydotprint(_model(), outfile=str(outfile), format="dot", print_output_file=False)
    assert outfile.read_text().startswith("digraph")
    if shutil.which("dot"):
        assert pydotprint(_model(), format="png", return_image=True)[:4] == b"\x89PNG"
    else:
        with pytest.raises(RuntimeError, match="needs graphviz's dot program"):
            pydotprint(_model(), format="png", return_image=True)


def test_d3viz_writes_a_self_contained_page(tmp_path):
    from sympile.d3viz import d3viz, layout
    from sympile.printing import GraphPicture
    outfile = tmp_path / "graph.html"
    d3viz(_model(), str(outfile))
    page = outfile.read_text()
    svg = page[page.index("<svg"):page.index("</svg>") + len("</svg>")]
    document = xml.dom.minidom.parseString(svg)
    assert len(document.getElementsByTagName("ellipse")) == 4  # exp, mul, add, sum
    assert "Elemwise{exp,no_inplace}" in svg and "<script>" in page and "http" not in \
        page.replace("http://www.w3.org/2000/svg", "")
    picture = GraphPicture(_model())
    positions = layout(picture)
    for source, target, _ in picture.edges:  # every edge points down the page
        assert positions[source][1] < positions[target][1]
