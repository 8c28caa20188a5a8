#!/usr/bin/env python3
"""Write differential fixtures for the SentencePiece path.

For each of the 13 language codes mwtokenizer 0.2.0 tokenizes with a SentencePiece
model, and for each input text, it records:

* `pieces`: `SentencePieceProcessor(model).encode(text, out_type=str)` with the
  model file mwtokenizer uses for that code (the reference for the
  `wikisuggest-sentencepiece` crate);
* `words`: `mwtokenizer.Tokenizer(code).word_tokenize(text)` (the reference for
  `wikisuggest_text::MwTokenizer::words`);
* `sentences`: `mwtokenizer.Tokenizer(code).sentence_tokenize(text)` (the reference for
  `wikisuggest_text::MwTokenizer::sentences`: the same splitter as for every language, with
  the code's abbreviations).

Input texts, all real or generated here:

* the lines of a recorded Japanese Wikipedia page (wikitext of "ONE OK ROCK") in the
  test data of the wptools 0.4.17 source distribution on PyPI (`tests/parse_66.py`);
* CLDR display names (territories, languages, scripts, months, days) of the code's
  locale, from the babel package's locale data, one per case and in runs;
* seeded random "soups" mixing the characters the normalizer rewrites (compatibility
  forms, spaces of every kind, control characters, combining marks, U+2581 itself)
  with text of the code's script.

The full set (without `--max-cases`) also holds three small BPE models trained here on the
jawiki lines, with the options the 12 models leave at one setting (user-defined symbols, byte
fallback, the default whitespace handling, whitespace as a suffix, other charsmaps), and the
library's pieces for them (`synthetic-*.json` next to `synthetic-*.model`).

It also checks that the model files shipped in the repository are byte-identical to
the ones inside the installed mwtokenizer package. Run it with the packages of
`requirements-sentencepiece.txt`:

    python -m venv /tmp/spvenv
    /tmp/spvenv/bin/pip install -r tests/fixtures_builder/requirements-sentencepiece.txt
    pip download --no-deps --no-binary :all: wptools==0.4.17 -d /tmp/wptools
    /tmp/spvenv/bin/python tests/fixtures_builder/make_sentencepiece_fixtures.py \
        --wptools-sdist /tmp/wptools/wptools-0.4.17.tar.gz --out /tmp/sp-fixtures

The Rust tests read the output directory from `WIKISUGGEST_SENTENCEPIECE_FIXTURES`;
`--max-cases N` writes at most N cases per code (how the small committed set under
`tests/data/sentencepiece/` is made).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import io
import json
import os
import random
import sys
import tarfile
from importlib.resources import files

import babel
import mwtokenizer
import sentencepiece
from mwtokenizer.config.symbols import NON_WHITESPACE_LANGUAGES_SPC_MAPPING

WPTOOLS_SHA256 = "6f77eda0f19cdd0e3e31c6759fd18baa1fef1357668e9838f3d2380451b83e26"
WPTOOLS_MEMBER = "wptools-0.4.17/tests/parse_66.py"
REPO = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHIPPED_MODELS = os.path.join(REPO, "crates", "wikisuggest-text", "assets", "spcmodels")

# The CLDR locales whose names supply text in each code's script.
LOCALES = {
    "bo": ["bo"],
    "dz": ["dz"],
    "gan": ["zh_Hans", "zh_Hant"],
    "ja": ["ja"],
    "km": ["km"],
    "lo": ["lo"],
    "my": ["my"],
    "th": ["th"],
    "wuu": ["zh"],
    "zh": ["zh", "zh_Hant"],
    "zh_classical": ["zh_Hant"],
    # zh-min-nan Wikipedia is written in Latin letters with tone marks.
    "zh_min_nan": ["vi", "zh_Hant"],
    "zh_yue": ["yue"],
}

# Characters the nmt_nfkc charsmap rewrites or drops, and whitespace of every kind.
SOUP_SPECIALS = (
    " \t\n\r\x0b\x0c\x00\x01\x1f\x7f\x85\xa0\xad\u1680\u2000\u2002\u2009\u200a\u200b"
    "\u200c\u200d\u2028\u2029\u202f\u205f\u2060\u3000\ufeff\ufffd\u2581\u2581"
    "ﬁﬂ①⑳㍿㌔ｶﾞﾊﾟｰ｡､ＡＢｃ１２３！？（）［］～＂＇＼℃№™Å\u0301\u0308\u3099\u309a"  # noqa: RUF001
    "ｧｨ㈱㊤ⅰⅻ½⁴₂ǅĲ\U0001d400\U0001f600\U0001f1ef\U0001f1f5\ue000\U000f0000"
    "がぱヴゔ가각韓國語。、．，「」『』・ー〜…‥"  # noqa: RUF001
)


def wiki_lines(sdist: str) -> list[str]:
    with open(sdist, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != WPTOOLS_SHA256:
        sys.exit(f"{sdist}: sha256 {digest}, expected {WPTOOLS_SHA256}")
    with tarfile.open(sdist) as tar:
        member = tar.extractfile(WPTOOLS_MEMBER)
        assert member is not None
        source = member.read().decode("utf-8")
    # The file assigns a raw string literal `response` holding the API's JSON.
    tree = ast.parse(source)
    response = next(
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and getattr(node.targets[0], "id", None) == "response"
        and isinstance(node.value, ast.Constant)
    )
    wikitext = json.loads(response)["parse"]["wikitext"]
    return [line for line in wikitext.split("\n") if line.strip()]


def cldr_texts(code: str) -> list[str]:
    names: list[str] = []
    for name in LOCALES[code]:
        locale = babel.Locale.parse(name)
        for table in (locale.territories, locale.languages, locale.scripts):
            names.extend(str(v) for _, v in sorted(table.items()))
        names.extend(str(v) for _, v in sorted(locale.months["format"]["wide"].items()))
        names.extend(str(v) for _, v in sorted(locale.days["format"]["wide"].items()))
    runs = ["".join(names[i : i + 7]) for i in range(0, len(names), 7)]
    spaced = [" ".join(names[i : i + 5]) for i in range(0, len(names), 5)]
    return names[::3] + runs + spaced


def soups(code: str, script_text: str, count: int) -> list[str]:
    rng = random.Random(f"sentencepiece-{code}")
    pool = SOUP_SPECIALS + script_text
    out = []
    for _ in range(count):
        length = rng.randint(1, 40)
        out.append("".join(rng.choice(pool) for _ in range(length)))
    return out


# Small BPE models trained here on the jawiki lines, for the options the 12 models do not use:
# user-defined symbols with byte fallback and the default whitespace handling; whitespace as a
# suffix without a charsmap; another charsmap without a dummy prefix.
SYNTHETIC = {
    "user-defined-byte-fallback": {
        "user_defined_symbols": ["東京", "<tag>"],
        "byte_fallback": True,
    },
    "whitespace-suffix-identity": {
        "treat_whitespace_as_suffix": True,
        "normalization_rule_name": "identity",
    },
    "nfkc-cf-no-prefix": {
        "normalization_rule_name": "nfkc_cf",
        "add_dummy_prefix": False,
        "remove_extra_whitespaces": False,
    },
}


def synthetic_fixtures(wiki: list[str], out: str, soup_count: int) -> None:
    for name, options in SYNTHETIC.items():
        model = io.BytesIO()
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(wiki),
            model_writer=model,
            model_type="bpe",
            vocab_size=1500,
            minloglevel=2,
            num_threads=1,
            **options,
        )
        model_file = f"synthetic-{name}.model"
        with open(os.path.join(out, model_file), "wb") as f:
            f.write(model.getvalue())
        processor = sentencepiece.SentencePieceProcessor(model_proto=model.getvalue())
        texts = wiki[:300] + soups(name, "東京<tag>", soup_count) + ["", " ", "  x  y  "]
        cases = [{"text": t, "pieces": processor.encode(t, out_type=str)} for t in texts]
        fixture = {"model_file": model_file, "options": options, "cases": cases}
        with open(os.path.join(out, f"synthetic-{name}.json"), "w", encoding="utf-8") as f:
            json.dump(fixture, f, ensure_ascii=False, indent=0)
            f.write("\n")
        print(f"synthetic {name}: {len(cases)} cases", file=sys.stderr)


def check_models() -> None:
    package = files("mwtokenizer.assets.spcmodels")
    for model in sorted(set(NON_WHITESPACE_LANGUAGES_SPC_MAPPING.values())):
        theirs = package.joinpath(model).read_bytes()
        with open(os.path.join(SHIPPED_MODELS, model), "rb") as f:
            ours = f.read()
        if ours != theirs:
            sys.exit(f"{model}: the shipped model differs from mwtokenizer's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wptools-sdist", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--max-cases", type=int, default=0)
    parser.add_argument("--soups", type=int, default=300)
    args = parser.parse_args()
    assert mwtokenizer.__version__ == "0.2.0"
    check_models()
    wiki = wiki_lines(args.wptools_sdist)
    os.makedirs(args.out, exist_ok=True)
    package = files("mwtokenizer.assets.spcmodels")
    for code, model in sorted(NON_WHITESPACE_LANGUAGES_SPC_MAPPING.items()):
        processor = sentencepiece.SentencePieceProcessor(model_file=str(package.joinpath(model)))
        tokenizer = mwtokenizer.Tokenizer(code)
        cldr = cldr_texts(code)
        # Japanese gets the whole page; the other models a slice of it (CJK text is
        # still real input for the Chinese models, and unknown text for the others).
        texts = (wiki if code == "ja" else wiki[:120]) + cldr
        texts += soups(code, "".join(cldr), args.soups)
        texts += ["", " ", "  ", "\u2581", "東京は日本の首都です。"]
        if args.max_cases:
            step = max(1, len(texts) // args.max_cases)
            texts = texts[::step][: args.max_cases]
        cases = [
            {
                "text": text,
                "pieces": processor.encode(text, out_type=str),
                "words": list(tokenizer.word_tokenize(text)),
                "sentences": list(tokenizer.sentence_tokenize(text)),
            }
            for text in texts
        ]
        fixture = {
            "code": code,
            "model": model,
            "mwtokenizer": mwtokenizer.__version__,
            "sentencepiece": sentencepiece.__version__,
            "cases": cases,
        }
        with open(os.path.join(args.out, f"sp-{code}.json"), "w", encoding="utf-8") as f:
            json.dump(fixture, f, ensure_ascii=False, indent=0)
            f.write("\n")
        print(f"{code}: {len(cases)} cases", file=sys.stderr)
    if not args.max_cases:
        synthetic_fixtures(wiki, args.out, args.soups)


if __name__ == "__main__":
    main()
