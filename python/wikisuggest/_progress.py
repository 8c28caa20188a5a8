"""Progress bars (tqdm, in a terminal or a notebook) for long batches, runs and downloads."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["ByteProgress", "PhaseProgress", "Progress", "say"]


def _tqdm() -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError as err:
        raise ImportError("progress=True needs tqdm: pip install 'wikisuggest[progress]'") from err
    return tqdm


class Progress:
    """A tqdm bar when asked for (terminal or notebook), otherwise nothing."""

    def __init__(self, enabled: bool, total: int | None, desc: str) -> None:
        self.bar: Any = None
        if enabled:
            self.bar = _tqdm()(total=total, desc=desc, unit="page")

    def update(self, item: Any) -> None:
        if self.bar is not None:
            self.bar.update(1)
            if item.error is not None:
                self.bar.set_postfix_str(f"last error: {type(item.error).__name__}", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class ByteProgress:
    """A bar of bytes (a download), set to absolute counts: ``update(done, total)``. Its rate
    counts the bytes of this run only: a resumed download starts its bar at the bytes it
    already had."""

    def __init__(self, desc: str) -> None:
        self.tqdm = _tqdm()
        self.desc = desc
        self.bar: Any = None

    def update(self, done: int, total: int | None) -> None:
        if self.bar is None:
            self.bar = self.tqdm(
                desc=self.desc,
                total=total,
                initial=done,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                leave=False,
            )
        if total is not None and self.bar.total != total:
            self.bar.total = total
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


#: The unit of each conversion phase's counts: bytes, or records of a kind.
PHASE_UNITS = {
    "read": "B",
    "titles": "title",
    "anchors": "anchor",
    "index": "key",
    "write": "B",
    "verify": "B",
}


class PhaseProgress:
    """One bar per phase of a long step (a conversion): ``update(done, total, phase)``.
    Each bar counts in its phase's unit (bytes, titles, anchors, keys) and starts when the
    phase's first count arrives, so its rate is the phase's own."""

    def __init__(self, desc: str) -> None:
        self.tqdm = _tqdm()
        self.desc = desc
        self.phase: str | None = None
        self.bar: Any = None

    def update(self, done: int, total: int | None, phase: str) -> None:
        if phase != self.phase:
            self.close()
            self.phase = phase
            unit = PHASE_UNITS.get(phase, "it")
            self.bar = self.tqdm(
                desc=f"{self.desc}: {phase}",
                total=total,
                initial=done,
                unit=unit,
                unit_scale=unit == "B",
                unit_divisor=1024 if unit == "B" else 1000,
                leave=False,
            )
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def say(message: str) -> None:
    """Prints a line on stderr without breaking the bars on screen."""
    _tqdm().write(message, file=sys.stderr)
