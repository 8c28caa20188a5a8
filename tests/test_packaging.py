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


def test_readme_states_what_the_build_needs() -> None:
    """The README names the Rust toolchain the build needs (the workspace's ``rust-version``,
    which clippy holds the code to), how to see the build's progress, the one abi3 wheel for
    every Python from 3.10 (as the build and the package metadata declare it), and what the
    suite costs."""
    import tomllib

    readme = (ROOT / "README.md").read_text()
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text())
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    stated = re.search(r"Rust toolchain ≥ (\d+)\.(\d+)", readme)
    assert stated, "the README names no Rust toolchain"
    manifest = cargo["workspace"]["package"]["rust-version"].split(".")
    assert (int(stated[1]), int(stated[2])) == (int(manifest[0]), int(manifest[1]))
    assert "pip\ninstall -v ." in readme or "pip install -v ." in readme
    assert cargo["features"]["abi3"] == ["pyo3/abi3-py310"]
    assert pyproject["project"]["requires-python"] == ">=3.10"
    assert "maturin build --release --features abi3" in readme and "cp310-abi3" in readme
    assert re.search(r"`bash \.ci/run`.*took [\d.]+ minutes", readme, re.S)
    assert re.search(r"used [\d.]+ GB of disk", readme)


def test_shared_dependencies_are_pinned_once() -> None:
    """A third-party crate two workspace crates use is declared once, in
    ``[workspace.dependencies]``, so that it is built in one version."""
    import tomllib

    manifests = [ROOT / "Cargo.toml", *sorted((ROOT / "crates").glob("*/Cargo.toml"))]
    users: dict[str, list[str]] = {}
    loose: list[str] = []
    for manifest in manifests:
        data = tomllib.loads(manifest.read_text())
        tables = [data.get(k, {}) for k in ("dependencies", "dev-dependencies")]
        tables += [t.get("dependencies", {}) for t in data.get("target", {}).values()]
        for table in tables:
            for name, spec in table.items():
                if isinstance(spec, dict) and "path" in spec:
                    continue
                users.setdefault(name, []).append(manifest.parent.name)
                if not (isinstance(spec, dict) and spec.get("workspace")):
                    loose.append(f"{manifest.parent.name}: {name}")
    shared = {name for name, crates in users.items() if len(set(crates)) > 1}
    assert shared, "the scan found no shared dependency"
    assert [entry for entry in loose if entry.split(": ")[1] in shared] == []
    lock = tomllib.loads((ROOT / "Cargo.lock").read_text())
    versions = [p["version"] for p in lock["package"] if p["name"] == "base64"]
    assert len(versions) == 1, versions
