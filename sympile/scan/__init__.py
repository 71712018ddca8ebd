"""scan: symbolic loops (Theano's `theano.scan`). See sympile.scan.basic."""

from sympile.scan.basic import scan, until  # noqa: F401
from sympile.scan.op import Scan  # noqa: F401
from sympile.scan import rewriting  # noqa: F401 - registers the scan rewrites
from sympile.scan import merge  # noqa: F401 - registers scan_merge
from sympile.scan import memory  # noqa: F401 - registers scan_keep_last_steps

__all__ = ["Scan", "scan", "until"]
