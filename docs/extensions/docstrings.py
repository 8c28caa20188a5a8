"""How the API reference reads the package's docstrings (a Griffe extension of the site).

The docstrings are written for ``help()`` and Sphinx: cross-references as roles
(``:class:`LinkEngine```, ``:meth:`~wikisuggest.Batch.as_completed```) and examples as doctest
runs (``>>> engine = ...  # doctest: +SKIP``). The site renders docstrings as Markdown, where a
role is literal text and a doctest run is a quotation. Before rendering, this extension turns

* every role naming an object of the package into a cross-reference (``[`LinkEngine`][path]``),
  resolved as Python resolves a name at that place (the object's class, its module, the
  modules above it, then the package's top level), to the object's canonical path; a role
  naming anything else (the standard library, a private module) becomes code;
* every run of doctest lines into a ``pycon`` code block, without its ``# doctest:``
  directives;
* a constructor that takes a native handle (an annotation from ``wikisuggest._native``) into
  no signature: such a class is made by its class methods, which the page lists;
* special methods (``__repr__``, ``__enter__``...) into members the page does not list: the
  class's docstring says what it supports (``with``, iteration).

The text functions need no Griffe and are tested by ``tests/test_readme.py``; the class at
the bottom is what ``mkdocs.yml`` loads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

#: A Sphinx role: ``:kind:`target```, ``:kind:`~target```, ``:kind:`text <target>```. A
#: target may wrap onto the next line of the docstring.
ROLE = re.compile(
    r":(?:py:)?(?P<kind>class|meth|func|mod|attr|data|exc|obj|const):"
    r"`(?P<body>[^`]+)`"
)
#: A doctest directive at the end of a line.
DIRECTIVE = re.compile(r"\s*#\s*doctest:.*$")
#: The special members the page shows: the constructor (merged into its class's heading) and
#: a callable object's call.
KEPT = frozenset({"__init__", "__call__"})
#: What the resolver answers: the canonical path of a public object, or None.
Resolver = Callable[[str], str | None]


def role_parts(body: str) -> tuple[str, str]:
    """``(shown text, target)`` of a role's body, as Sphinx reads it."""
    body = " ".join(body.split())
    explicit = re.fullmatch(r"(?P<text>.+?)\s*<(?P<target>[^<>]+)>", body)
    if explicit:
        return explicit["text"], explicit["target"]
    target = body.removeprefix("~").removeprefix(".")
    if body.startswith("~"):
        return target.rsplit(".", 1)[-1], target
    return target, target


def crossrefs(text: str, resolve: Resolver) -> str:
    """The text with each role replaced by a cross-reference or by code."""

    def replace(match: re.Match[str]) -> str:
        shown, target = role_parts(match["body"])
        if match["kind"] in {"meth", "func"} and not shown.endswith(")"):
            shown += "()"
        path = resolve(target.removesuffix("()"))
        return f"[`{shown}`][{path}]" if path else f"`{shown}`"

    return ROLE.sub(replace, text)


def doctest_blocks(text: str) -> str:
    """The text with each run of ``>>>``/``...`` lines (and the output lines after them, up to
    a blank line) fenced as a ``pycon`` block, its doctest directives removed."""
    out: list[str] = []
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.lstrip()
        if not stripped.startswith(">>>"):
            out.append(line)
            index += 1
            continue
        indent = line[: len(line) - len(stripped)]
        block: list[str] = []
        while index < len(lines) and lines[index].strip():
            block.append(DIRECTIVE.sub("", lines[index].removeprefix(indent)))
            index += 1
        if out and out[-1].strip():
            out.append("")
        out.extend([f"{indent}```pycon", *(indent + b for b in block), f"{indent}```"])
    return "\n".join(out)


def render(text: str, resolve: Resolver) -> str:
    """A docstring as the site renders it."""
    return crossrefs(doctest_blocks(text), resolve)


def _scopes(obj: Any) -> Iterator[Any]:
    """Where a name used in ``obj``'s docstring is looked up, innermost first."""
    scope = obj
    while scope is not None:
        if scope.kind.value in {"class", "module"}:
            yield scope
        scope = scope.parent


def _private(path: str) -> bool:
    """Whether a dotted path names something private (``_html``; not ``__init__``)."""
    return any(p.startswith("_") and not p.endswith("__") for p in path.split("."))


try:
    import griffe
except ImportError:  # the test environment reads the text functions only
    pass
else:

    class SphinxDocstrings(griffe.Extension):
        """Renders the package's Sphinx-style docstrings for the site (see the module)."""

        def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
            for obj in list(_walk(pkg, set())):
                if obj.is_class:
                    special = [n for n in obj.members if n.startswith("__") and n.endswith("__")]
                    for name in special:
                        if name not in KEPT or (name == "__init__" and _native_constructor(obj)):
                            obj.del_member(name)
                if obj.docstring is not None:
                    obj.docstring.value = render(
                        obj.docstring.value, lambda target, o=obj: _resolve(pkg, o, target)
                    )

    def _walk(obj: griffe.Object, seen: set[str]) -> Iterator[griffe.Object]:
        if obj.path in seen:
            return
        seen.add(obj.path)
        yield obj
        for member in obj.members.values():
            if not member.is_alias:
                yield from _walk(member, seen)

    def _native_constructor(cls: griffe.Class) -> bool:
        init = cls.members.get("__init__")
        if init is None or init.is_alias or not init.is_function:
            return False
        return any(
            "_native" in str(getattr(parameter.annotation, "canonical_path", ""))
            for parameter in init.parameters
        )

    def _resolve(pkg: griffe.Module, obj: griffe.Object, target: str) -> str | None:
        candidates = [f"{scope.path}.{target}" for scope in _scopes(obj)]
        candidates += [target, f"{pkg.path}.{target}"]
        for candidate in candidates:
            if not candidate.startswith(f"{pkg.path}."):
                continue
            try:
                found = pkg[candidate.removeprefix(f"{pkg.path}.")]
                path = found.canonical_path
            except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
                continue
            return None if _private(target) or found.name.startswith("_") else path
        return None
