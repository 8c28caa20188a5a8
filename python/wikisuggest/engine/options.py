"""The options of the local engine's recommendations: their keyword arguments, typed once per
family, and their one check on the way into the extension (types here; values, against the
defaults the extension exports, natively)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

from .. import _args
from .._args import EngineOptions
from .._native import ENGINE_DEFAULTS
from .rules import LinkRules, native_rules

__all__ = ["PassOptions", "RecommendOptions", "ScoringOptions", "pass_options"]


class ScoringOptions(TypedDict, total=False):
    """:class:`PassOptions` but the rules: what a whole-wiki run over several wikis takes
    besides its rules per wiki."""

    language_code: str | None
    threshold: float
    max_recommendations: int
    sections_to_exclude: Iterable[str] | None
    time_budget: float | None


class PassOptions(ScoringOptions, total=False):
    """The keyword arguments of every :class:`LinkEngine` recommendation, for all its pages;
    their defaults are :data:`wikisuggest.ENGINE_DEFAULTS`: those of every link operation
    (the wiki's language, no excluded sections, ...), no time budget and no rules."""

    #: Never-link rules (:class:`~wikisuggest.LinkRules` or a rule file's path).
    rules: LinkRules | str | os.PathLike[str] | None


class RecommendOptions(PassOptions, total=False):
    """The keyword arguments of :meth:`LinkEngine.recommend`: :class:`PassOptions` and the
    page's ids (default ``None``)."""

    pageid: int | None
    revid: int | None


def pass_options(given: Mapping[str, Any]) -> EngineOptions:
    """The options shared by the pages of a call (every engine entry's), over their defaults,
    type-checked (ranges are checked natively, with the client's rules)."""
    options = _args.with_defaults(ENGINE_DEFAULTS, given)
    return {
        "language_code": _args.optional_text("language_code", options["language_code"]),
        "threshold": _args.number("threshold", options["threshold"]),
        "max_recommendations": _args.integer("max_recommendations", options["max_recommendations"]),
        "sections_to_exclude": _args.text_list(
            "sections_to_exclude", options["sections_to_exclude"]
        ),
        "time_budget": _args.optional_number("time_budget", options["time_budget"]),
        "rules": native_rules(options["rules"]),
    }
