"""Never-link rules: what a wiki's editors do not want suggested, applied by the engine itself.

>>> import wikisuggest
>>> rules = wikisuggest.LinkRules(exclude_targets=["Mammal"], exclude_anchors=["the city"])
>>> engine = wikisuggest.LinkEngine.default()
>>> result = engine.recommend("The aardvark is a mammal.", "Aardvark", rules=rules)
>>> "Mammal" in [link.link_target for link in result.links]
False

A rule set names link targets (a redirect stands for its target), anchor phrases (compared
whole with the link's text, case-folded, or exactly with ``exclude_anchors_exact``), target
classes (Wikidata items whose instances, by P31, are never targets: give ``classes``, a table
of the targets' P31 values, and items or a preset such as ``"production"`` in
``exclude_classes``), sections never searched, duplicate links, whole pages by template or
category, and a wiki's task limits (lowest score, most links, most shown, fewest links).

The engine applies them inside its pass: a removed link keeps its place in the pass, so every
other link is exactly production's, and the slot it frees goes to the next link production
finds. Without rules the output is production's, bit for bit. The same rule set is a file on
disk (TOML or JSON, :meth:`LinkRules.load`, described by ``link-rules.schema.json``), a
``--rules`` option of the command line, and a per-wiki setting of the server.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import _args
from .._native import NativeLinkRules
from ..errors import InvalidParameter
from ..records import ExcludedLink, Exclusion, ExplainedResult

__all__ = [
    "ENWIKI_CLASSES",
    "PRODUCTION_CLASSES",
    "ExcludedLink",
    "Exclusion",
    "ExplainedResult",
    "LinkRules",
]

#: The Wikidata classes production removed from every wiki's link targets when it built its
#: datasets: disambiguation pages, lists, dates and times, units and currencies, given names.
#: ``exclude_classes=["production"]`` names the same list.
PRODUCTION_CLASSES: tuple[str, ...] = (
    "Q4167410", "Q13406463", "Q3186692", "Q577", "Q573", "Q39911", "Q578", "Q36507",
    "Q47150325", "Q47018478", "Q205892", "Q14795564", "Q18340514", "Q1978718", "Q1790144",
    "Q1302471", "Q3647172", "Q2916980", "Q3550873", "Q8142", "Q27084", "Q202444", "Q1243157",
    "Q3409032", "Q12308941", "Q11879590",
)  # fmt: skip
#: What production removed on enwiki besides: countries and continents
#: (``exclude_classes=["production-enwiki"]`` names both lists).
ENWIKI_CLASSES: tuple[str, ...] = ("Q6256", "Q5107")

#: The list arguments of :class:`LinkRules` and the limits (the rule file's keys are checked
#: where they are defined, natively).
_LISTS = (
    "exclude_targets",
    "exclude_anchors",
    "exclude_anchors_exact",
    "exclude_classes",
    "exclude_sections",
    "exclude_templates",
    "exclude_categories",
    "template_namespaces",
    "category_namespaces",
)
_LIMITS = ("max_links", "max_links_shown", "min_links")


class LinkRules:
    """A checked, immutable set of never-link rules; pass it as ``rules=`` to every
    :class:`~wikisuggest.LinkEngine` recommendation, ``recommend_dump`` and the Spark entry.

    Every argument is optional. Lists take any iterable of strings (a bare string is refused,
    as a rule file's reader refuses it). ``classes`` is a mapping
    title → P31 items, or the path of a table (``.tsv``: columns ``title`` and ``p31``, items
    separated by ``|``; ``.parquet``: the same columns, ``p31`` a list or a string; see
    :func:`wikisuggest.fill_classes`); only the titles it excludes are kept.
    ``exclude_classes`` takes Wikidata items (``Q5``) and the presets ``"production"`` and
    ``"production-enwiki"`` (:data:`PRODUCTION_CLASSES`, and :data:`ENWIKI_CLASSES` with it).
    ``min_score`` raises a lower ``threshold``; ``max_links`` lowers a larger
    ``max_recommendations``; ``max_links_shown`` keeps only that many of the best-scored links
    (as the editing tool shows them); ``min_links`` drops every link of a page with fewer.
    """

    __slots__ = ("_native",)

    def __init__(
        self,
        *,
        exclude_targets: Iterable[str] | None = None,
        exclude_anchors: Iterable[str] | None = None,
        exclude_anchors_exact: Iterable[str] | None = None,
        exclude_classes: Iterable[str] | None = None,
        classes: Mapping[str, Iterable[str]] | str | os.PathLike[str] | None = None,
        exclude_sections: Iterable[str] | None = None,
        exclude_templates: Iterable[str] | None = None,
        exclude_categories: Iterable[str] | None = None,
        template_namespaces: Iterable[str] | None = None,
        category_namespaces: Iterable[str] | None = None,
        no_duplicate_links: bool = False,
        min_score: float | None = None,
        max_links: int | None = None,
        max_links_shown: int | None = None,
        min_links: int | None = None,
    ) -> None:
        given = locals()
        spec: dict[str, Any] = {}
        for name in _LISTS:
            values = _args.string_list(name, given[name])
            if values:
                spec[name] = values
        if _args.flag("no_duplicate_links", no_duplicate_links):
            spec["no_duplicate_links"] = True
        if min_score is not None:
            spec["min_score"] = _args.number("min_score", min_score)
        for name in _LIMITS:
            if given[name] is not None:
                spec[name] = _args.integer(name, given[name])
        if classes is not None:
            spec["classes"] = _classes(classes)
        self._native = NativeLinkRules.from_spec(spec)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> LinkRules:
        """Read a rule file: TOML (``.toml``) or JSON (``.json``) with the keys of this class's
        arguments, and ``version = 1``. A ``classes`` path in it is read relative to the file
        (TSV). Unknown keys are refused, so a misspelt rule is an error."""
        return cls._of(NativeLinkRules.load(os.fspath(path)))

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> LinkRules:
        """The rule set of a dict with a rule file's keys (what :meth:`to_dict` returns)."""
        if not isinstance(spec, Mapping):
            raise InvalidParameter("rules must be a mapping", parameter="rules")
        given = dict(spec)
        for name in _LISTS:
            if name in given:
                # A bare string would be read letter by letter, one entry per letter.
                given[name] = _args.string_list(name, given[name])
        if "classes" in given:
            given["classes"] = _classes(given["classes"])
        # Its keys, their types and ranges are the rule set's one definition's to check.
        return cls._of(NativeLinkRules.from_spec(given))

    @classmethod
    def _of(cls, native: NativeLinkRules) -> LinkRules:
        rules = cls.__new__(cls)
        rules._native = native
        return rules

    def to_dict(self) -> dict[str, Any]:
        """The rule set as a rule file's keys; the class table reduced to the titles it
        excludes, so the dict is self-contained."""
        return self._native.spec()

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the rule set as a rule file: JSON for a ``.json`` name, TOML otherwise."""
        path = Path(path)
        if path.suffix.lower() == ".json":
            text = self._native.to_json() + "\n"
        else:
            text = "# wikisuggest link rules\nversion = 1\n" + self._native.to_toml()
        path.write_text(text, "utf-8")
        return path

    def page_exclusion(
        self,
        wikitext: str,
        *,
        templates: Iterable[str] = (),
        categories: Iterable[str] = (),
    ) -> Exclusion | None:
        """The template or category rule that excludes a page: those its wikitext calls and
        names, then ``templates`` and ``categories`` as its wiki lists them (which include
        those reached through other templates)."""
        found = self._native.page_exclusion(
            _args.text("wikitext", wikitext),
            _args.string_list("templates", templates),
            _args.string_list("categories", categories),
        )
        return None if found is None else Exclusion(*found)

    def link_exclusion(self, link_text: str, target: str) -> Exclusion | None:
        """The target, class or anchor rule a link falls under, outside any pass (the target
        is compared as given: resolve redirects first where they matter)."""
        found = self._native.link_exclusion(
            _args.text("link_text", link_text), _args.text("target", target)
        )
        return None if found is None else Exclusion(*found)

    @property
    def native(self) -> NativeLinkRules:
        """The checked rule set the engine receives."""
        return self._native

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LinkRules):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        # Workers (Spark, multiprocessing) rebuild the rules from their self-contained dict.
        return (LinkRules.from_dict, (self.to_dict(),))

    def __repr__(self) -> str:
        spec = self.to_dict()
        parts = [
            f"{name}={len(spec[name])}"
            if isinstance(spec[name], list)
            else f"{name}={spec[name]!r}"
            for name in spec
            if name != "classes"
        ]
        if spec.get("classes"):
            parts.append(f"classes={len(spec['classes'])} titles")
        return f"LinkRules({', '.join(parts)})"


def native_rules(rules: Any) -> NativeLinkRules | None:
    """The ``rules=`` argument as the engine takes it: a :class:`LinkRules`, a rule file's
    path, or ``None``."""
    if rules is None or isinstance(rules, NativeLinkRules):
        return rules
    if isinstance(rules, LinkRules):
        return rules.native
    if isinstance(rules, (str, os.PathLike)):
        return LinkRules.load(rules).native
    raise InvalidParameter(
        f"rules must be LinkRules or the path of a rule file, got {type(rules).__name__}",
        parameter="rules",
    )


def _parquet_classes(path: Path) -> dict[str, list[str]]:
    """A P31 table in Parquet (columns ``title`` and ``p31``, a list or a string of items) as a
    dict title → items; TSV tables are read by the engine itself."""
    try:
        import pyarrow.parquet as pq
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("reading Parquet needs pyarrow: pip install pyarrow") from err
    table = pq.read_table(path, columns=["title", "p31"]).to_pydict()
    out: dict[str, list[str]] = {}
    for title, items in zip(table["title"], table["p31"], strict=True):
        if title is None or items is None:
            continue
        out[str(title)] = _split(items) if isinstance(items, str) else [str(i) for i in items]
    return out


def _split(cell: str) -> list[str]:
    return [item for item in cell.replace("|", " ").replace(",", " ").split() if item]


def _classes(value: Any) -> Any:
    """``classes`` as the native spec takes it: a TSV path as a string (read natively), a
    Parquet table or a mapping as title → list of items."""
    if isinstance(value, (str, os.PathLike)):
        path = Path(value)
        if path.suffix.lower() == ".parquet":
            return _parquet_classes(path)
        if not path.is_file():
            raise InvalidParameter(f"{path}: no such classes table", parameter="classes")
        return os.fspath(path)
    if isinstance(value, Mapping):
        table = {}
        for title, items in value.items():
            table[_args.text("classes", title)] = _args.string_list("classes", items)
        return table
    raise InvalidParameter(
        "classes must be a mapping title → P31 items or the path of a table, got "
        f"{type(value).__name__}",
        parameter="classes",
    )
