"""Progress bars (tqdm, in a terminal or a notebook) for long batches, runs and downloads."""

from __future__ import annotations

from typing import Any

__all__ = ["Progress"]


class Progress:
    """A tqdm bar when asked for (terminal or notebook), otherwise nothing."""

    def __init__(self, enabled: bool, total: int | None, desc: str) -> None:
        self.bar: Any = None
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError as err:
                raise ImportError(
                    "progress=True needs tqdm: pip install 'wikisuggest[progress]'"
                ) from err
            self.bar = tqdm(total=total, desc=desc, unit="page")

    def update(self, item: Any) -> None:
        if self.bar is not None:
            self.bar.update(1)
            if item.error is not None:
                self.bar.set_postfix_str(f"last error: {type(item.error).__name__}", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
