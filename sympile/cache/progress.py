"""Feedback while C compiles (config.compile_progress): when a module's build has been
running for a second, a progress bar through its C units on stderr (tqdm when installed,
else one line), on a terminal only; silent otherwise, and for builds that end sooner."""

from __future__ import annotations

import sys
import threading
from typing import Any, TextIO

__all__ = ["CompileProgress"]


class CompileProgress:
    """Counts finished units of a build of `total`; shows itself after `delay` seconds."""

    def __init__(self, total: int, delay: float = 1.0, stream: TextIO | None = None,
                 enabled: bool = True):
        self.total, self.done = total, 0
        self.stream = stream if stream is not None else sys.stderr
        self._bar: Any = None
        self._lock = threading.Lock()
        self._closed = False
        isatty = getattr(self.stream, "isatty", None)
        self._timer = None
        if enabled and total > 1 and isatty is not None and isatty():
            self._timer = threading.Timer(delay, self._show)
            self._timer.daemon = True
            self._timer.start()

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
