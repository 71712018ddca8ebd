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


def test_silent_when_short_not_a_terminal_or_switched_off():
    quick = Terminal()
    progress = CompileProgress(5, delay=10.0, stream=quick)
    progress.close()
    assert not progress.shown and quick.getvalue() == ""
    for stream, enabled in ((io.StringIO(), True), (Terminal(), False)):
        progress = CompileProgress(5, delay=0.01, stream=stream, enabled=enabled)
        time.sleep(0.1)
        progress.close()
        assert not progress.shown and stream.getvalue() == ""
