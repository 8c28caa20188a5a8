"""A built wheel, installed alone into a fresh virtual environment, works.

    python tests/support/smoke_wheel.py DIST_DIR_OR_WHEEL [--python PYTHON] [--keep DIR]

creates a virtual environment with PYTHON (default: this interpreter), installs the wheel
from DIST_DIR_OR_WHEEL into it with no index and no dependencies (the package has none), and
runs there ``python -m wikisuggest demo`` and :func:`check`: the extension module loads from
the installed wheel; the shipped sample engine recommends links; the reference server, started
on 127.0.0.1, serves the same links to the HTTP client. Only the standard library and the
installed package are used, so the release workflow runs this file on every platform (and in
containers holding nothing of the repository but this file and the wheel).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

USER_AGENT = "wikisuggest-smoke/1.0 (https://github.com/wikisuggest/wikisuggest)"


def check() -> None:
    """Runs inside the fresh environment."""
    import importlib.resources

    import wikisuggest
    from wikisuggest import _native

    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    native = Path(_native.__file__).resolve()
    assert native.is_relative_to(site), f"{native} is not the installed wheel's (under {site})"
    print(f"wikisuggest {wikisuggest.__version__} from {native.name}")

    data = importlib.resources.files("wikisuggest") / "data"
    title = "Aardvark"
    wikitext = (data / "articles" / f"{title}.wikitext").read_text("utf-8")
    engine = wikisuggest.LinkEngine.default()
    local = engine.recommend(wikitext, title, threshold=0.5)
    assert local.links, "the sample engine recommended no link"
    for link in local.links:
        assert link.link_target and link.score is not None and 0.5 <= link.score <= 1, link

    with tempfile.TemporaryDirectory() as scratch:
        datasets = Path(scratch) / "datasets" / "enwiki"
        datasets.mkdir(parents=True)
        shutil.copyfile(str(data / "enwiki.linkdata"), datasets / "enwiki.linkdata")
        pages = Path(scratch) / "pages"
        pages.mkdir()
        (pages / f"{title}.wikitext").write_text(wikitext, "utf-8")
        with (
            wikisuggest.Server(datasets=datasets.parent, pages=pages) as server,
            wikisuggest.Client(USER_AGENT, base_url=server.url, auth_url=server.url) as client,
        ):
            served = client.link_recommendations("wikipedia", "en", title, threshold=0.5)
    pairs = [(link.link_text, link.link_target, link.score) for link in local.links]
    assert [(link.link_text, link.link_target, link.score) for link in served.links] == pairs
    print(f"{title}: {len(pairs)} links, the same from the engine and from the server")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("wheel", type=Path, help="a wheel, or a folder holding exactly one")
    parser.add_argument("--python", default=sys.executable, help="the environment's Python")
    parser.add_argument("--keep", type=Path, help="create the environment here and keep it")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        check()
        return 0

    wheel = args.wheel
    if wheel.is_dir():
        found = sorted(wheel.glob("wikisuggest-*.whl"))
        if len(found) != 1:
            parser.error(f"expected one wikisuggest wheel in {wheel}, found {len(found)}")
        wheel = found[0]
    with tempfile.TemporaryDirectory() as scratch:
        venv = args.keep or Path(scratch) / "venv"
        subprocess.run([args.python, "-m", "venv", "--clear", str(venv)], check=True)
        windows = os.name == "nt"
        bindir = venv / ("Scripts" if windows else "bin")
        python = str(bindir / ("python.exe" if windows else "python"))

        def run(*command: str) -> None:
            # From a folder that is not the checkout: only the installed package can be imported.
            subprocess.run(command, cwd=scratch, check=True)

        run(
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-index",
            "--no-deps",
            str(wheel.resolve()),
        )
        run(python, "-m", "wikisuggest", "demo", "Aardvark")
        run(python, str(Path(__file__).resolve()), str(wheel), "--inside")
        run(str(bindir / ("wikisuggest.exe" if windows else "wikisuggest")), "--version")
    return 0


if __name__ == "__main__":
    sys.exit(main())
