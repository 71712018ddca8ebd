"""numpy.testing.dec, which numpy removed and Theano's tests still import: the
decorators as pytest marks."""

import pytest


def skipif(condition, msg=""):
    return pytest.mark.skipif(bool(condition() if callable(condition) else condition),
                              reason=msg or "skipped")


def knownfailureif(condition, msg=""):
    condition = condition() if callable(condition) else condition
    return pytest.mark.xfail(bool(condition), reason=msg or "known failure", strict=False)


def slow(function):
    return function
