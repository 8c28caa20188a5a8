"""How commands print: JSON (the default when the output is not a terminal) or a table."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["bars_wanted", "emit", "table"]


def bars_wanted() -> bool:
    """Whether to draw progress bars: on a terminal, where tqdm is installed (elsewhere a long
    step reports in lines, or not at all)."""
    if not sys.stderr.isatty():
        return False
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


def table(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    cells = [[("" if row.get(c) is None else str(row.get(c))) for c in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def emit(args: argparse.Namespace, items: Any, columns: Sequence[str], rows_of: Any) -> int:
    """Print batch items as JSON or a table; the exit status is 1 when any item failed."""
    failed = 0
    if args.format == "json":
        out = []
        for item in items:
            entry: dict[str, Any] = {"input": item.input}
            if item.ok:
                result = item.result
                entry["result"] = (
                    [r.to_dict() for r in result] if isinstance(result, list) else result.to_dict()
                )
            else:
                failed += 1
                entry["error"] = {"type": type(item.error).__name__, "message": str(item.error)}
            out.append(entry)
        json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
        print()
    else:
        rows: list[dict[str, Any]] = []
        for item in items:
            if item.ok:
                rows.extend(rows_of(item))
            else:
                failed += 1
                print(f"{item.input}: {type(item.error).__name__}: {item.error}", file=sys.stderr)
        print(table(rows, columns))
    return 1 if failed else 0
