"""The project's packaging declarations agree with each other."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
CARGO = tomllib.loads((ROOT / "Cargo.toml").read_text("utf-8"))


def _pins(lines: list[str]) -> dict[str, str]:
    pins = {}
    for line in lines:
        requirement = line.partition("#")[0].strip()
        if requirement:
            name, equals, version = requirement.partition("==")
            assert equals, f"not pinned: {requirement}"
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def _group(name: str) -> list[str]:
    out: list[str] = []
    for item in PYPROJECT["dependency-groups"][name]:
        out.extend(_group(item["include-group"]) if isinstance(item, dict) else [item])
    return out


def test_development_groups_pin_what_the_suite_installs() -> None:
    """``pip install --group dev`` and requirements-dev.txt give the same tool versions."""
    suite = _pins((ROOT / "requirements-dev.txt").read_text("utf-8").splitlines())
    dev = _pins(_group("dev"))
    assert {"pytest", "mypy", "ruff", "maturin"} <= dev.keys()
    assert {name: suite.get(name) for name in dev} == dev


def test_every_tool_is_pinned() -> None:
    for group in PYPROJECT["dependency-groups"]:
        _pins(_group(group))
    _pins((ROOT / "docs" / "requirements.txt").read_text("utf-8").splitlines())


def test_users_are_offered_no_development_extras() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert not {"test", "lint", "dev", "docs"} & extras.keys()


def test_the_build_backend_is_the_pinned_maturin() -> None:
    (backend,) = PYPROJECT["build-system"]["requires"]
    bounds = re.fullmatch(r"maturin>=([\d.]+),<(\d+)", backend)
    assert bounds, backend
    low, high = bounds.groups()
    pinned = _pins(_group("release"))["maturin"]
    assert tuple(map(int, low.split("."))) <= tuple(map(int, pinned.split("."))) < (int(high),)


def test_version_and_licence_have_one_source() -> None:
    # The Python package's version is the Rust workspace's (maturin reads it from Cargo.toml).
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", CARGO["workspace"]["package"]["version"])
    changelog = (ROOT / "CHANGELOG.md").read_text("utf-8")
    assert f"## [{CARGO['workspace']['package']['version']}]" in changelog
    for path in PYPROJECT["project"]["license-files"]:
        assert (ROOT / path).is_file(), path
    assert "MIT" in PYPROJECT["project"]["license"].split()
    assert CARGO["workspace"]["package"]["license"] == "MIT"
