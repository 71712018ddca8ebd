"""Tests of sympile/graph/utils.py: the user's creation site, the scratchpad."""

from __future__ import annotations

import os

import sympile.graph.basic
from sympile.graph.utils import MethodNotDefined, Scratchpad, user_creation_site
from tests.graph.test_basic import MyType, next_line_site, site_of


def test_user_creation_site_is_the_callers_line():
    expected = next_line_site()
    site = user_creation_site()
    assert site_of(site) == expected


def test_user_creation_site_skips_the_package():
    # Variable.__init__ calls it from inside sympile: the site is this test, not the package.
    site = next_line_site()
    x = sympile.graph.basic.Variable(MyType())
    assert site_of(x.tag.trace) == site
    package_dir = os.path.dirname(os.path.abspath(sympile.graph.basic.__file__))
    assert not x.tag.trace.startswith(package_dir)


def test_user_creation_site_from_exec():
    namespace = {"user_creation_site": user_creation_site}
    # Code compiled from a string has no real file: the site is the name it was compiled as.
    exec(compile("site = user_creation_site()\n", "<user code>", "exec"), namespace)
    assert namespace["site"] == "<user code>:1"


def test_scratchpad():
    tag = Scratchpad()
    tag.note = 1
    assert tag.note == 1 and repr(tag) == "Scratchpad({'note': 1})"


def test_method_not_defined_is_a_not_implemented_error():
    assert issubclass(MethodNotDefined, NotImplementedError)
