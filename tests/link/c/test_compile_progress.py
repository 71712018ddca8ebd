"""Feedback while C compiles (sympile.cache.progress, config.compile_progress)."""

from __future__ import annotations

import io
import time

from sympile.cache.progress import CompileProgress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_long_build_on_a_terminal_shows_a_bar_of_its_units():
    stream = Terminal()
    progress = CompileProgress(5, delay=0.05, stream=stream)
    progress.advance()
    time.sleep(0.3)
    assert progress.shown
    for _ in range(4):
        progress.advance()
    progress.close()
    assert "sympile: compiling 5 C units" in stream.getvalue()


def test_silent_when_short_or_switched_off():
    quick = Terminal()
    progress = CompileProgress(5, delay=10.0, stream=quick)
    progress.close()
    assert not progress.shown and quick.getvalue() == ""
    for stream, enabled in ((io.StringIO(), True), (Terminal(), False)):
        progress = CompileProgress(5, delay=0.01, stream=stream, enabled=enabled,
                                   plain_delay=10.0)
        time.sleep(0.1)
        progress.close()
        assert not progress.shown and stream.getvalue() == ""


def test_a_long_build_elsewhere_prints_one_plain_line():
    """Where stderr is not a terminal (a log, CI, a pipe): one line, no bar."""
    stream = io.StringIO()
    progress = CompileProgress(58, stream=stream, where="/cache", plain_delay=0.05)
    time.sleep(0.3)
    for _ in range(58):
        progress.advance()
    progress.close()
    assert stream.getvalue() == ("sympile: compiling 58 C units (first run only; cached in "
                                 "/cache)\n")
