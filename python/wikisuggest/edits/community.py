"""A wiki's own Add a Link settings (its community configuration), read as never-link rules.

>>> from wikisuggest.edits.community import CommunityConfiguration
>>> config = CommunityConfiguration.from_wiki(wiki)  # doctest: +SKIP
>>> result = engine.recommend(text, title, rules=config.rules())  # doctest: +SKIP

Wikis that run the GrowthExperiments extension keep the settings of their suggested-edit tasks
on the page ``MediaWiki:GrowthExperimentsSuggestedEdits.json``. Its ``link_recommendation``
object (``link-recommendation`` in older pages) says, as GrowthExperiments applies it:

* ``excludedTemplates``, ``excludedCategories``: an article transcluding one of these templates
  (directly or through another template) or in one of these categories gets no task;
* ``excludedSections``: section titles the service is asked not to search;
* ``minimumLinkScore`` (default 0.6): the service's threshold, and the lowest score a task's
  links may have;
* ``maximumLinksPerTask`` (default 10, not in the current schema): the links asked for;
* ``maximumLinksToShowPerTask`` (default 3): the editor shows only that many, the best scored;
* ``minimumLinksPerTask`` (default 2, not in the current schema): an article with fewer good
  links gets no task;
* ``underlinkedWeight`` (default 0.5): how much the task search favours underlinked articles
  over random ones. It orders tasks, not links: it is kept here but changes no suggestion;
* ``disabled``: the task type is off.

A page is excluded by templates and categories seen in its wikitext, and, where a wiki is
given, by those its Action API lists (which include templates reached through others and the
categories they add).
"""

from __future__ import annotations

import json
import os
import reprlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..engine.rules import Exclusion, LinkRules
from ..errors import ConfigurationError, DecodeError
from .wiki import Wiki

__all__ = ["CONFIG_PAGE", "CommunityConfiguration", "query_all"]

#: The page that holds a wiki's suggested-edits configuration.
CONFIG_PAGE = "MediaWiki:GrowthExperimentsSuggestedEdits.json"

#: GrowthExperiments' defaults for settings a page leaves out.
DEFAULTS: dict[str, Any] = {
    "minimumLinkScore": 0.6,
    "maximumLinksPerTask": 10,
    "maximumLinksToShowPerTask": 3,
    "minimumLinksPerTask": 2,
    "underlinkedWeight": 0.5,
}

_TASK_KEYS = ("link_recommendation", "link-recommendation")
_TEMPLATE_NS, _CATEGORY_NS = 10, 14


@dataclass(frozen=True)
class CommunityConfiguration:
    """The link-recommendation settings of one wiki (see the module docs)."""

    excluded_templates: tuple[str, ...] = ()
    excluded_categories: tuple[str, ...] = ()
    excluded_sections: tuple[str, ...] = ()
    minimum_link_score: float = DEFAULTS["minimumLinkScore"]
    maximum_links_per_task: int = DEFAULTS["maximumLinksPerTask"]
    maximum_links_to_show_per_task: int = DEFAULTS["maximumLinksToShowPerTask"]
    minimum_links_per_task: int = DEFAULTS["minimumLinksPerTask"]
    underlinked_weight: float = DEFAULTS["underlinkedWeight"]
    disabled: bool = False
    #: Local names of the template and category namespaces (from the wiki, when read there).
    template_namespaces: tuple[str, ...] = ()
    category_namespaces: tuple[str, ...] = ()
    #: Where the settings were read.
    source: str = ""

    @classmethod
    def from_json(
        cls, data: str | Mapping[str, Any], *, source: str = ""
    ) -> CommunityConfiguration:
        """The settings of a configuration page's JSON (text or decoded)."""
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as err:
                raise ConfigurationError(f"{source or 'configuration'}: not JSON: {err}") from err
            except RecursionError as err:
                # Python's JSON reader recurses once per level: a page nested thousands of
                # levels deep is refused as what it is, whatever the interpreter's limit.
                raise ConfigurationError(
                    f"{source or 'configuration'}: nested too deeply to be a configuration"
                ) from err
        if not isinstance(data, Mapping):
            raise ConfigurationError(f"{source or 'configuration'}: expected a JSON object")
        task: Any = next((data[k] for k in _TASK_KEYS if k in data), {})
        where = f"{source or 'configuration'}: link_recommendation"
        if not isinstance(task, Mapping):
            raise ConfigurationError(f"{where} must be an object")
        check = _Checker(where, task)
        return cls(
            excluded_templates=check.titles("excludedTemplates"),
            excluded_categories=check.titles("excludedCategories"),
            excluded_sections=check.titles("excludedSections"),
            minimum_link_score=check.number("minimumLinkScore", 0.0, 1.0),
            maximum_links_per_task=int(check.number("maximumLinksPerTask", 1, None, integer=True)),
            maximum_links_to_show_per_task=int(
                check.number("maximumLinksToShowPerTask", 1, None, integer=True)
            ),
            minimum_links_per_task=int(check.number("minimumLinksPerTask", 0, None, integer=True)),
            underlinked_weight=check.number("underlinkedWeight", 0.0, 1.0),
            disabled=check.flag("disabled"),
            source=source,
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> CommunityConfiguration:
        """The settings in a local copy of the configuration page (JSON)."""
        path = Path(path)
        return cls.from_json(path.read_text("utf-8"), source=str(path))

    @classmethod
    def from_wiki(cls, wiki: Wiki, *, page: str = CONFIG_PAGE) -> CommunityConfiguration:
        """The settings on ``wiki``'s configuration page (GrowthExperiments' defaults when
        the wiki has none), with its local namespace names."""
        found = wiki.page(page)
        text = "{}" if found is None else found.wikitext
        config = cls.from_json(text, source=f"{wiki.api_url} {page}")
        templates, categories = _namespace_names(wiki)
        return replace(config, template_namespaces=templates, category_namespaces=categories)

    def rules(self, base: LinkRules | None = None) -> LinkRules:
        """These settings as never-link rules, added to ``base`` when given (its lists
        extended, its limits replaced by the wiki's)."""
        spec: dict[str, Any] = {} if base is None else base.to_dict()

        def extend(key: str, values: Iterable[str]) -> None:
            merged = list(spec.get(key, []))
            merged += [v for v in values if v not in merged]
            if merged:
                spec[key] = merged

        extend("exclude_templates", self.excluded_templates)
        extend("exclude_categories", self.excluded_categories)
        extend("exclude_sections", self.excluded_sections)
        extend("template_namespaces", self.template_namespaces)
        extend("category_namespaces", self.category_namespaces)
        spec["min_score"] = self.minimum_link_score
        spec["max_links"] = self.maximum_links_per_task
        spec["max_links_shown"] = self.maximum_links_to_show_per_task
        spec["min_links"] = self.minimum_links_per_task
        return LinkRules.from_dict(spec)

    def page_exclusion(self, wiki: Wiki, title: str, wikitext: str = "") -> Exclusion | None:
        """Whether the task configuration excludes the article ``title`` of ``wiki``: by the
        templates and categories the wiki lists for it, and those of ``wikitext``."""
        if not (self.excluded_templates or self.excluded_categories):
            return None
        templates, categories = page_templates_and_categories(wiki, title)
        return self.rules().page_exclusion(wikitext, templates=templates, categories=categories)


def page_templates_and_categories(wiki: Wiki, title: str) -> tuple[list[str], list[str]]:
    """Every template ``title`` transcludes (directly or not) and every category it is in, as
    the wiki lists them (with their namespace)."""
    templates: list[str] = []
    categories: list[str] = []
    params = {
        "action": "query",
        "titles": title,
        "prop": "templates|categories",
        "tlnamespace": str(_TEMPLATE_NS),
        "tllimit": "max",
        "cllimit": "max",
    }
    for body in query_all(wiki, params):
        query = _object(wiki, body.get("query", {}), "the query result")
        for page in _objects(wiki, query.get("pages", []), "its pages"):
            for key, found in (("templates", templates), ("categories", categories)):
                for entry in _objects(wiki, page.get(key, []), f"a page's {key}"):
                    found.append(_text(wiki, entry.get("title"), f"the title of one of its {key}"))
    return templates, categories


#: Most continued requests one listing follows (a page lists at most a few thousand items).
_MAX_CONTINUATIONS = 100


def query_all(wiki: Wiki, params: Mapping[str, str]) -> Iterable[dict[str, Any]]:
    """The bodies of a query and of each continuation the wiki offers."""
    extra: dict[str, str] = {}
    for _ in range(_MAX_CONTINUATIONS):
        body = wiki.read({**params, **extra})
        yield body
        more = body.get("continue")
        if not isinstance(more, dict):
            return
        extra = {str(k): str(v) for k, v in more.items()}
    raise ConfigurationError(f"{wiki.api_url}: more than {_MAX_CONTINUATIONS} continuations")


def _namespace_names(wiki: Wiki) -> tuple[tuple[str, ...], tuple[str, ...]]:
    body = wiki.read(
        {"action": "query", "meta": "siteinfo", "siprop": "namespaces|namespacealiases"}
    )
    query = _object(wiki, body.get("query", {}), "the siteinfo")
    names: dict[int, list[str]] = {_TEMPLATE_NS: [], _CATEGORY_NS: []}
    spaces = query.get("namespaces", {})
    entries = list(spaces.values()) if isinstance(spaces, dict) else spaces
    for entry in _objects(wiki, entries, "its namespaces"):
        if entry.get("id") in names:
            for key in ("name", "canonical"):
                if key in entry:
                    names[entry["id"]].append(_text(wiki, entry[key], f"a namespace's {key}"))
    for alias in _objects(wiki, query.get("namespacealiases", []), "its namespace aliases"):
        if alias.get("id") in names:
            names[alias["id"]].append(_text(wiki, alias.get("alias"), "a namespace alias"))

    def distinct(values: list[str]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v for v in values if v))

    return distinct(names[_TEMPLATE_NS]), distinct(names[_CATEGORY_NS])


def _object(wiki: Wiki, value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DecodeError(f"{wiki.api_url}: {what} is a {type(value).__name__}, not an object")
    return value


def _objects(wiki: Wiki, value: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DecodeError(f"{wiki.api_url}: {what} are not a list of objects")
    return value


def _text(wiki: Wiki, value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise DecodeError(f"{wiki.api_url}: {what} is a {type(value).__name__}, not text")
    return value


class _Checker:
    """The schema's checks of one task object, with GrowthExperiments' defaults."""

    def __init__(self, where: str, task: Mapping[str, Any]) -> None:
        self.where = where
        self.task = task

    def _fail(self, key: str, what: str) -> ConfigurationError:
        # A bounded picture of the value: it may be nested or long.
        got = reprlib.repr(self.task.get(key))
        return ConfigurationError(f"{self.where}.{key} {what}, got {got}")

    def titles(self, key: str) -> tuple[str, ...]:
        value = self.task.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._fail(key, "must be a list of strings")
        return tuple(v for v in value if v.strip())

    def number(self, key: str, low: float, high: float | None, *, integer: bool = False) -> float:
        value = self.task.get(key, DEFAULTS.get(key))
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self._fail(key, "must be a number")
        if integer and not float(value).is_integer():
            raise self._fail(key, "must be an integer")
        if value < low or (high is not None and value > high):
            bounds = f"at least {low}" if high is None else f"between {low} and {high}"
            raise self._fail(key, f"must be {bounds}")
        return float(value)

    def flag(self, key: str) -> bool:
        value = self.task.get(key, False)
        if not isinstance(value, bool):
            raise self._fail(key, "must be true or false")
        return value
