"""The source distribution (``WIKISUGGEST_SDIST``; ``bash scripts/test`` sets it) holds what a
source build needs and no more, and a wheel built from it alone installs and works.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path, PurePosixPath

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
SDIST = os.environ.get("WIKISUGGEST_SDIST")
#: The Python of an environment with maturin, which builds from the sdist without build isolation
#: so that the build reuses this checkout's compiled dependencies.
BUILD_PYTHON = os.environ.get("WIKISUGGEST_BUILD_PYTHON")
VERSION = tomllib.loads((ROOT / "Cargo.toml").read_text("utf-8"))["workspace"]["package"]["version"]
TOP = f"wikisuggest-{VERSION}"

pytestmark = pytest.mark.skipif(
    not SDIST, reason="no sdist (bash scripts/test builds one: scripts/build-wheel)"
)


def _members() -> set[PurePosixPath]:
    assert SDIST
    with tarfile.open(SDIST) as archive:
        names = {PurePosixPath(m.name) for m in archive.getmembers() if m.isfile()}
    assert all(name.parts[0] == TOP for name in names)
    return {name.relative_to(TOP) for name in names}


def _tree(folder: Path, pattern: str) -> set[PurePosixPath]:
    return {
        PurePosixPath(p.relative_to(ROOT).as_posix())
        for p in folder.glob(pattern)
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".so", ".pyd"}
    }


def test_holds_the_sources_and_nothing_else() -> None:
    crates = sorted(p.parent for p in ROOT.glob("crates/*/Cargo.toml"))
    expected = {
        PurePosixPath(name)
        for name in (
            "PKG-INFO",
            "pyproject.toml",
            "Cargo.toml",
            "Cargo.lock",
            "README.md",
            "LICENSE",
            "DATA-ATTRIBUTION",
        )
    }
    expected |= _tree(ROOT / "src", "**/*.rs") | _tree(ROOT / "python", "**/*")
    for crate in crates:
        expected |= _tree(crate, "Cargo.toml") | _tree(crate, "README.md")
        expected |= _tree(crate, "src/**/*.rs") | _tree(crate, "assets/**/*")
    assert _members() == expected


def test_manifests_name_no_missing_target() -> None:
    """Targets of the repository that stay out of the sdist (benchmarks, examples, tests) must
    not be named by the manifests it carries, or cargo would refuse them."""
    assert SDIST
    with tarfile.open(SDIST) as archive:
        for member in archive.getmembers():
            if member.name.endswith("/Cargo.toml"):
                data = archive.extractfile(member)
                assert data is not None
                manifest = tomllib.loads(data.read().decode("utf-8"))
                for kind in ("bench", "example", "test"):
                    assert kind not in manifest, (member.name, manifest[kind])


@pytest.mark.timeout(3600)
def test_a_wheel_built_from_it_installs_and_works(tmp_path: Path) -> None:
    assert SDIST
    if not BUILD_PYTHON:
        pytest.skip("WIKISUGGEST_BUILD_PYTHON names no build environment")
    # The sdist unpacked and built on its own, as pip does for a user. What a source build
    # needs is the question, not how it is optimised: the development profile, whose compiled
    # dependencies `cargo test` left in target/, spares CI a second optimised build.
    env = {
        **os.environ,
        "CARGO_TARGET_DIR": str(ROOT / "target"),
        "MATURIN_PEP517_ARGS": os.environ.get(
            "WIKISUGGEST_SDIST_BUILD_ARGS", "--profile dev --features abi3"
        ),
        "PATH": f"{Path(BUILD_PYTHON).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    built = tmp_path / "wheel"
    subprocess.run(
        [BUILD_PYTHON, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
         "--no-deps", "--no-build-isolation", "--wheel-dir", str(built), SDIST],
        cwd=tmp_path, env=env, check=True, timeout=3500,
    )  # fmt: skip
    (wheel,) = built.glob(f"wikisuggest-{VERSION}-cp310-abi3-*.whl")
    subprocess.run(
        [sys.executable, str(ROOT / "tests" / "support" / "smoke_wheel.py"), str(wheel)],
        cwd=tmp_path, check=True, timeout=600,
    )  # fmt: skip
