"""How stale is a published dataset? :func:`diff` compares it with a current dump.

It reports what the published dataset misses (link targets since deleted or turned into redirects,
articles created since, which it can never suggest) and runs two backtests on the same held-out
articles of the dump: the published model, and a model built now from the dump by
:func:`wikisuggest.datasets.build.build`. Both are read at production's default threshold
(:data:`THRESHOLD`, that of every link recommendation) against production's guide for a model worth
deploying (precision ≥ 0.75, recall ≥ 0.20). The published model may have seen older versions of
the held-out articles in training; the fresh build has not, so the comparison leans in the
published model's favour.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .._native import LINK_DEFAULTS, backtest_dataset, dataset_drift, dump_wiki, wiki_language
from ..errors import DatasetError
from .build import BacktestPoint
from .fetch import fetch
from .published import wiki_id

__all__ = ["GUIDE", "DatasetDiff", "diff"]

#: Production's guide for a model worth deploying, at :data:`THRESHOLD`: (precision, recall).
GUIDE = (0.75, 0.20)
#: The threshold both backtests are read at: the default of every link recommendation.
THRESHOLD: float = LINK_DEFAULTS["threshold"]


@dataclass(frozen=True)
class Backtest(BacktestPoint):
    """Micro precision and recall at :data:`THRESHOLD` on the held-out articles."""

    def meets_guide(self) -> bool:
        return self.precision >= GUIDE[0] and self.recall >= GUIDE[1]


@dataclass(frozen=True)
class DatasetDiff:
    """What :func:`diff` found."""

    wiki: str
    snapshot: str
    dump: str
    targets: int
    deleted_targets: int
    redirected_targets: int
    articles: int
    new_articles: int
    backtest_articles: int
    published: Backtest
    fresh: Backtest
    examples: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def retrain(self) -> bool:
        """Whether a model built now would serve better: it meets the guide and the
        published model does not, or it recalls more at no less precision."""
        p, f = self.published, self.fresh
        if not f.meets_guide():
            return False
        return not p.meets_guide() or (f.recall > p.recall and f.precision >= p.precision)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for name in ("published", "fresh"):
            b: Backtest = getattr(self, name)
            out[name].update(precision=b.precision, recall=b.recall, meets_guide=b.meets_guide())
        out["guide"] = {"threshold": THRESHOLD, "precision": GUIDE[0], "recall": GUIDE[1]}
        out["retrain"] = self.retrain
        return out

    def format(self) -> str:
        def share(n: int, of: int) -> str:
            return f"{n} ({100 * n / of:.1f} %)" if of else str(n)

        def row(name: str, b: Backtest) -> str:
            ok = "meets" if b.meets_guide() else "below"
            return (
                f"  {name:<10} precision {b.precision:.3f}  recall {b.recall:.3f}  "
                f"({b.correct} of {b.recommended} recommended, {b.expected} expected; {ok} "
                "the guide)"
            )

        lines = [
            f"{self.wiki}: published snapshot {self.snapshot} against {self.dump}",
            f"  link targets: {self.targets}; deleted since: "
            f"{share(self.deleted_targets, self.targets)}; redirects now: "
            f"{share(self.redirected_targets, self.targets)}",
            f"  articles now: {self.articles}; created since (never suggested): "
            f"{share(self.new_articles, self.articles)}",
            f"backtest at {THRESHOLD} on {self.backtest_articles} held-out articles "
            f"(guide: precision ≥ {GUIDE[0]}, recall ≥ {GUIDE[1]}):",
            row("published", self.published),
            row("fresh", self.fresh),
            "verdict: " + ("retrain (a fresh build does better)" if self.retrain else "keep"),
        ]
        return "\n".join(lines)


def diff(
    wiki: str,
    dump: str | os.PathLike[str],
    *,
    language_code: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    offline: bool | None = None,
    user_agent: str | None = None,
    holdout_fraction: float = 0.5,
    max_test_articles: int = 10_000,
    examples: int = 10,
    build_options: dict[str, Any] | None = None,
) -> DatasetDiff:
    """Compares the published dataset of ``wiki`` (fetched, or from the cache) with the dump
    ``dump`` of the same wiki (see the module docs). ``language_code`` defaults to the wiki
    id's language (:func:`wikisuggest.datasets.wiki_language`); ``build_options`` go to the
    fresh build."""
    from .build import build

    wiki = wiki_id(wiki)
    # A dump of another wiki would report every link target as deleted: refused before
    # anything is fetched or built.
    of = dump_wiki(str(dump))
    if of and of != wiki:
        raise DatasetError(
            f"{dump} is a dump of {of}, not of {wiki}: compare {wiki}'s published dataset "
            f"with a dump of {wiki}",
            wiki=wiki,
            path=str(dump),
        )
    language = language_code or wiki_language(wiki)
    native = fetch(wiki, cache_dir=cache_dir, offline=offline, user_agent=user_agent)
    with tempfile.TemporaryDirectory(prefix=f"{wiki}-fresh-") as tmp:
        report = build(
            Path(dump),
            wiki,
            tmp,
            language_code=language,
            holdout_fraction=holdout_fraction,
            max_test_articles=max_test_articles,
            thresholds=[THRESHOLD],
            **(build_options or {}),
        )
        drift = dataset_drift(str(native), str(report.native_path), examples)
        # Judged by today's titles: links to articles the published dataset does not know
        # count as missed, as they are.
        raw, articles = backtest_dataset(
            str(dump), str(native.parent), wiki, language, [THRESHOLD],
            holdout_fraction, max_test_articles, str(Path(report.native_path).parent),
        )  # fmt: skip
    fresh = report.backtest[0]
    return DatasetDiff(
        wiki=wiki,
        snapshot=native.parent.name,
        dump=str(Path(dump)),
        targets=drift["targets"],
        deleted_targets=drift["deleted"],
        redirected_targets=drift["redirected"],
        articles=drift["articles"],
        new_articles=drift["new_articles"],
        backtest_articles=articles,
        published=Backtest(THRESHOLD, *raw[0][1:]),
        fresh=Backtest(THRESHOLD, fresh.recommended, fresh.expected, fresh.correct),
        examples=drift["examples"],
    )
