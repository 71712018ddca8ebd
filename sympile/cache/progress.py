"""Feedback while C compiles (config.compile_progress): when a module's build has been
running for a second, a progress bar through its C units on stderr (tqdm when installed,
else one line) on a terminal; where stderr is not one (a notebook's log, CI, `| tee`), one
plain line once the build has run for PLAIN_DELAY seconds. Silent for builds that end
sooner."""

from __future__ import annotations

import sys
import threading
from typing import Any, TextIO

__all__ = ["PLAIN_DELAY", "CompileProgress"]

# Seconds before the plain line where stderr is not a terminal.
PLAIN_DELAY = 5.0


class CompileProgress:
    """Counts finished units of a build of `total`; shows itself after `delay` seconds."""

    def __init__(self, total: int, delay: float = 1.0, stream: TextIO | None = None,
                 enabled: bool = True, where: str = "", plain_delay: float = PLAIN_DELAY):
        self.total, self.done = total, 0
        self.stream = stream if stream is not None else sys.stderr
        self.where = where
        self._bar: Any = None
        self._lock = threading.Lock()
        self._closed = False
        isatty = getattr(self.stream, "isatty", None)
        terminal = isatty is not None and isatty()
        self._timer = None
        if enabled and total > 1:
            self._timer = threading.Timer(delay if terminal else plain_delay,
                                          self._show if terminal else self._show_plain)
            self._timer.daemon = True
            self._timer.start()

    def _show_plain(self) -> None:
        with self._lock:
            if self._closed:
                return
            cached = f"; cached in {self.where}" if self.where else ""
            self.stream.write(f"sympile: compiling {self.total} C units (first run only"
                              f"{cached})\n")
            self.stream.flush()
            self._bar = False

    def _show(self) -> None:
        with self._lock:
            if self._closed:
                return
            description = f"sympile: compiling {self.total} C units"
            try:
                from tqdm import tqdm
            except ImportError:
                self.stream.write(f"{description} (a few seconds; cached afterwards)...\n")
                self.stream.flush()
                self._bar = False
                return
            self._bar = tqdm(total=self.total, initial=self.done, desc=description,
                             unit="unit", file=self.stream, leave=False)

    def advance(self) -> None:
        """One unit is compiled (or was found in the cache)."""
        with self._lock:
            self.done += 1
            if self._bar:
                self._bar.update(1)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self._bar:
                self._bar.close()

    @property
    def shown(self) -> bool:
        return self._bar is not None
