"""nose.tools: assertion functions and the raises decorator."""

import functools
import unittest

_case = unittest.TestCase()
_case.maxDiff = None
assert_raises = _case.assertRaises
assert_equal = _case.assertEqual
assert_not_equal = _case.assertNotEqual
assert_true = _case.assertTrue
assert_false = _case.assertFalse
assert_almost_equal = _case.assertAlmostEqual
assert_is_instance = _case.assertIsInstance
assert_in = _case.assertIn


def raises(*exceptions):
    """The decorated test passes only if it raises one of `exceptions`."""
    def decorate(function):
        @functools.wraps(function)
        def test(*args, **kwargs):
            with assert_raises(exceptions):
                function(*args, **kwargs)
        return test
    return decorate
