"""Benchmarks: measured side by side, reported as ratios; never asserted in tests.

A benchmark times compiled code: its functions compile before they return
(config.compile_async off), so no timed call runs on the interim Python backend.
compile_time measures the background compile itself, turning it back on in its children.
"""

from sympile.config import config

config.compile_async = False
