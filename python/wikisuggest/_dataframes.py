"""Conversion of results to pandas DataFrames (pandas is optional)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas

LINK_COLUMNS = [
    "link_text",
    "link_target",
    "score",
    "wikitext_offset",
    "context_before",
    "context_after",
    "link_index",
    "match_index",
]
TRANSLATION_COLUMNS = ["title", "pageviews", "wikidata_id", "rank", "langlinks_count"]


def dataframe(rows: Iterable[Mapping[str, Any]], columns: list[str]) -> pandas.DataFrame:
    try:
        import pandas as pd
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "to_dataframe() needs pandas: pip install pandas (or 'wikisuggest[pandas]')"
        ) from err
    rows = list(rows)
    extra = [k for row in rows for k in row if k not in columns]
    ordered = columns + list(dict.fromkeys(extra))
    return pd.DataFrame.from_records(rows, columns=ordered)
