"""How one input of a client batch becomes the options of one request: a page (a title, a
``(domain, title)`` pair or a dict) or a translation request."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .. import _args
from ..errors import InvalidParameter

__all__ = ["link_item", "translation_item"]


def _spec_fields(
    spec: Any,
    defaults: Mapping[str, Any],
    single: str,
    pair: tuple[str, str],
    what: str,
    shapes: str,
) -> dict[str, Any]:
    """One item of a batch as fields over ``defaults``: a string is the field ``single``, a
    2-tuple the two fields of ``pair``, a mapping names fields (only those of ``defaults``)."""
    options = dict(defaults)
    if isinstance(spec, str):
        options[single] = spec
    elif isinstance(spec, (tuple, list)) and len(spec) == 2:
        options[pair[0]], options[pair[1]] = spec
    elif isinstance(spec, Mapping):
        unknown = set(spec) - set(defaults)
        if unknown:
            raise InvalidParameter(
                f"unknown {what} fields: {', '.join(sorted(map(str, unknown)))}",
                parameter=f"{what}s",
            )
        options.update(spec)
    else:
        raise InvalidParameter(
            f"a {what} must be {shapes}, got {type(spec).__name__}", parameter=f"{what}s"
        )
    return options


def link_item(defaults: Mapping[str, Any]) -> Callable[[Any], dict[str, Any]]:
    """How one page spec (a title, a ``(domain, title)`` pair, or a dict) becomes the options
    of one request; with ``wikitext`` among ``defaults``, of the POST form."""
    posted = "wikitext" in defaults

    def convert_any(spec: Any) -> dict[str, Any]:
        if isinstance(spec, Mapping) and "title" in spec and "page_title" not in spec:
            spec = {("page_title" if k == "title" else k): v for k, v in spec.items()}
        options = _spec_fields(
            spec,
            {"page_title": None, **defaults},
            "page_title",
            ("domain", "page_title"),
            "page",
            "a title, a (domain, title) pair or a dict",
        )
        if options.get("domain") is None:
            raise InvalidParameter(
                "no domain for this page: pass domain= or (domain, title) pairs", parameter="domain"
            )
        checked = _args.link_options(
            options["project"],
            options["domain"],
            options.get("page_title"),
            options["language_code"],
            options["threshold"],
            options["sections_to_exclude"],
            options["max_recommendations"],
        )
        if posted:
            checked["wikitext"] = _args.text("wikitext", options["wikitext"])
            checked["revid"] = _args.integer("revid", options["revid"])
            checked["pageid"] = _args.integer("pageid", options["pageid"])
        else:
            checked["revision"] = _args.optional_integer("revision", options["revision"])
        return checked

    # The common case, a list of titles sharing every other argument: check those arguments
    # once and only slot each title in.
    template: dict[str, Any] | None = None
    if not posted and isinstance(defaults.get("domain"), str):
        try:
            template = convert_any({"page_title": "-"})
        except InvalidParameter:
            template = None

    def convert(spec: Any) -> dict[str, Any]:
        if template is not None and type(spec) is str:
            return {**template, "page_title": _args.text("page_title", spec)}
        return convert_any(spec)

    return convert


def translation_item(defaults: Mapping[str, Any]) -> Callable[[Any], dict[str, Any]]:
    """A request spec: a ``(source, target)`` pair, a seed title (with default languages), or
    a dict of ``translation_recommendations`` arguments."""

    def convert(spec: Any) -> dict[str, Any]:
        options = _spec_fields(
            spec,
            defaults,
            "seed",
            ("source", "target"),
            "request",
            "a seed title, a (source, target) pair or a dict",
        )
        for name in ("source", "target"):
            if options.get(name) is None:
                raise InvalidParameter(f"no {name} language for this request", parameter=name)
        return _args.translation_options(**options)

    return convert
