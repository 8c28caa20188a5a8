"""``wikisuggest apply``: insert the links of a saved result into a page's wikitext."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..edits.apply import apply_links
from ..records import LinkRecommendationSet


def _read(path: str) -> str:
    return sys.stdin.read() if path == "-" else Path(path).read_text("utf-8")


#: The fields of a link and of a result this command reads, with the types they must have.
_LINK_FIELDS: dict[str, tuple[type, ...]] = {
    "link_text": (str,),
    "link_target": (str,),
    "score": (int, float, type(None)),
    "wikitext_offset": (int, type(None)),
    "context_before": (str, type(None)),
    "context_after": (str, type(None)),
    "link_index": (int, type(None)),
    "match_index": (int, type(None)),
}
_RESULT_FIELDS: dict[str, tuple[type, ...]] = {
    "page_title": (str, type(None)),
    "pageid": (int, type(None)),
    "revid": (int, type(None)),
}


def _check_fields(where: str, data: dict[str, Any], fields: dict[str, tuple[type, ...]]) -> None:
    for name, types in fields.items():
        value = data.get(name)
        if name in ("link_text", "link_target") and name not in data:
            raise ValueError(f"{where} has no {name!r}")
        # JSON's true and false are not numbers here.
        if isinstance(value, bool) or not isinstance(value, types):
            expected = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise ValueError(f"{where}.{name} must be {expected}, got {json.dumps(value)[:40]}")


def _result(data: Any) -> LinkRecommendationSet:
    """A result as the services return it, or the first item of ``wikisuggest links`` output,
    checked field by field (a wrongly typed field is named, never a crash)."""
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
        data = data[0].get("result", data[0])
    if not isinstance(data, dict) or not isinstance(data.get("links"), list):
        raise ValueError("expected a link recommendation result (an object with 'links')")
    _check_fields("the result", data, _RESULT_FIELDS)
    for i, link in enumerate(data["links"]):
        if not isinstance(link, dict):
            raise ValueError(f"links[{i}] must be an object, got {json.dumps(link)[:40]}")
        _check_fields(f"links[{i}]", link, _LINK_FIELDS)
    # The service's metadata plays no part in placing links.
    return LinkRecommendationSet.from_dict({k: v for k, v in data.items() if k != "meta"})


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None


def _indexes(value: str) -> set[int]:
    try:
        return {int(part) for part in value.split(",") if part.strip()}
    except ValueError as err:
        raise argparse.ArgumentTypeError(
            f"expected link indexes like 0,2,5, got {value!r}"
        ) from err


def _run(args: argparse.Namespace) -> int:
    if args.wikitext == "-" and args.result == "-":
        print("wikisuggest apply: only one of WIKITEXT and RESULT can be '-'", file=sys.stderr)
        return 2
    try:
        result = _result(_load(_read(args.result)))
    except (OSError, ValueError) as err:
        print(f"wikisuggest apply: {args.result}: {err}", file=sys.stderr)
        return 2
    try:
        wikitext = _read(args.wikitext)
    except (OSError, UnicodeDecodeError) as err:
        print(f"wikisuggest apply: {args.wikitext}: {err}", file=sys.stderr)
        return 2
    applied = apply_links(wikitext, result, accept=args.accept)
    sys.stdout.write(applied.diff() if args.diff else applied.wikitext)
    for item in applied.skipped:
        print(
            f"skipped #{item.link.link_index} {item.link.link_text!r} → "
            f"{item.link.link_target}: {item.reason.value}: {item.detail}",
            file=sys.stderr,
        )
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    apply = commands.add_parser(
        "apply", help="insert the links of a result into the page's wikitext"
    )
    apply.add_argument("wikitext", help="the page's wikitext file ('-': standard input)")
    apply.add_argument("result", help="link recommendations as JSON ('-': standard input)")
    apply.add_argument(
        "--accept", type=_indexes, default=None, metavar="I,J,…", help="link indexes to apply"
    )
    apply.add_argument("--diff", action="store_true", help="print a unified diff instead")
    apply.set_defaults(run=_run)
