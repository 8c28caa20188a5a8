#!/usr/bin/env python3
"""Reference fixtures for the scoring tests of the wikisuggest-engine crate.

Writes, into OUT_DIR, outputs of the pinned reference libraries that the Rust tests
compare bit for bit:

  numerical.model.json     XGBClassifier, numerical splits, early stopping (best_iteration)
  categorical.model.json   XGBClassifier, categorical (partition) splits on two columns
  rows.f64                 N x 7 little-endian float64 feature rows (NaN, thresholds, ...)
  <model>.proba.f32        N little-endian float32 = predict_proba(rows)[:, 1]
                           for numerical, categorical and parity (tests/data/parity model)
  jaro.jsonl               [a, b, float64 bits of Levenshtein.jaro(a, b)] per line
  kurtosis.jsonl           [counts, float64 bits of scipy kurtosis of the padded list]
  cosine.jsonl             [a f32 bits, b f32 bits, f32 bits of numpy cosine] per line
  parity_digest.json       independent decode (pickle.loads) of the parity .sql.gz dumps
  pickles.jsonl            [name, pickle hex, expected value] for protocols 2-5, numpy
                           scalars and arrays (values: see `expected_value`)
  manifest.json            versions, sizes, seed

Pinned environment:
  python -m venv .venv
  .venv/bin/pip install numpy==1.25.2 scipy==1.16.1 xgboost-cpu==2.1.4 \
      python-Levenshtein==0.12.1 scikit-learn==1.5.2
Usage:
  .venv/bin/python tests/fixtures_builder/make_model_fixtures.py OUT_DIR [--rows N]
  WIKISUGGEST_MODEL_FIXTURES=OUT_DIR cargo test -p wikisuggest-engine
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import pickle
import random
import struct
import sys
from pathlib import Path

import Levenshtein
import numpy as np
import scipy
import scipy.stats
import xgboost
from xgboost import XGBClassifier

REPO = Path(__file__).resolve().parents[2]
PARITY = REPO / "tests" / "data" / "parity" / "datasets" / "enwiki"
NUM_FEATURES = 7


def f64_bits(v: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def f32_bits(v) -> int:
    return int(np.float32(v).view(np.uint32))


# --------------------------------------------------------------------------- models


def training_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Feature-like columns: ngram, freq, ambig, kurtosis, w2v, jaro, wiki."""
    x = np.empty((n, NUM_FEATURES))
    x[:, 0] = rng.integers(1, 6, n)
    x[:, 1] = rng.geometric(0.2, n)
    x[:, 2] = rng.integers(1, 30, n)
    x[:, 3] = rng.normal(300, 300, n)
    x[rng.random(n) < 0.2, 3] = np.nan
    x[:, 4] = rng.uniform(-1, 1, n)
    x[rng.random(n) < 0.1, 4] = np.nan
    x[:, 5] = rng.uniform(0, 1, n)
    x[:, 6] = rng.integers(0, 12, n)
    logit = 2 * x[:, 4] + 3 * (x[:, 5] - 0.5) + 0.1 * x[:, 1] - 0.05 * x[:, 2] - 0.3 * (x[:, 6] % 3)
    logit = np.nan_to_num(logit)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return x, y


def train_numerical(rng: np.random.Generator) -> XGBClassifier:
    x, y = training_data(rng, 6000)
    xv, yv = training_data(rng, 2000)
    model = XGBClassifier(
        n_estimators=300,
        max_depth=5,
        learning_rate=0.3,
        early_stopping_rounds=5,
        tree_method="hist",
        n_jobs=1,
        random_state=1,
    )
    model.fit(x, y, eval_set=[(xv, yv)], verbose=False)
    assert model.best_iteration + 1 < model.get_booster().num_boosted_rounds(), "no early stop"
    return model


def train_categorical(rng: np.random.Generator) -> XGBClassifier:
    x, y = training_data(rng, 6000)
    x[:, 2] = np.minimum(x[:, 2], 25)
    model = XGBClassifier(
        n_estimators=60,
        max_depth=4,
        tree_method="hist",
        enable_categorical=True,
        max_cat_to_onehot=1,
        feature_types=["q", "q", "c", "q", "q", "q", "c"],
        n_jobs=1,
        random_state=2,
    )
    model.fit(x, y)
    return model


def split_values(model_json: dict) -> list[float]:
    values = []
    for tree in model_json["learner"]["gradient_booster"]["model"]["trees"]:
        for left, cond in zip(tree["left_children"], tree["split_conditions"], strict=True):
            if left != -1:
                values.append(cond)
    return values


def make_rows(rng: np.random.Generator, n: int, thresholds: list[float]) -> np.ndarray:
    """Rows from several regimes, including exact split thresholds and their float32
    neighbours, NaN, infinities, negative and non-integer categories."""
    x, _ = training_data(rng, n)
    regime = rng.integers(0, 4, n)
    th = np.array(thresholds, dtype=np.float32)
    for col in range(NUM_FEATURES):
        # Regime 1: exact thresholds (and one ulp either side).
        pick = th[rng.integers(0, len(th), n)]
        step = rng.integers(-1, 2, n)
        near = np.where(step < 0, np.nextafter(pick, np.float32(-np.inf)), pick)
        near = np.where(step > 0, np.nextafter(pick, np.float32(np.inf)), near)
        x[regime == 1, col] = near[regime == 1]
        # Regime 2: wide random values, NaN and infinities.
        wide = rng.normal(0, 10, n) * 10.0 ** rng.integers(-3, 4, n)
        special = rng.random(n)
        wide[special < 0.15] = np.nan
        wide[(special >= 0.15) & (special < 0.18)] = np.inf
        wide[(special >= 0.18) & (special < 0.21)] = -np.inf
        x[regime == 2, col] = wide[regime == 2]
    # Regime 3: categories incl. negative, fractional, large and unseen values.
    for col in (2, 6):
        cats = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0, 2.7, 3.0, 7.0, 11.0, 40.0, 1e9, np.nan], n)
        x[regime == 3, col] = cats[regime == 3]
    x[:, 6][regime == 0] = 0.0
    return x


# --------------------------------------------------------------------------- jaro etc.

ALPHABETS = [
    "ab",
    "abc ",
    "abcdefghij",
    "aeiouéèßçñ",
    "日本語中文字",
    "ab\u0301\u00e9😀\x00",
    "ΑΒΓαβγσς",
]


def random_string(r: random.Random) -> str:
    alphabet = r.choice(ALPHABETS)
    return "".join(r.choice(alphabet) for _ in range(r.choice([0, 1, 2, 3, 5, 8, 13, 30])))


def reads_past_the_end(a: str, b: str) -> bool:
    """True when python-Levenshtein 0.12.1 would compare a NUL of the longer string with
    the shorter string's terminator. It then also reads one word past its match array,
    which holds whatever the allocator left there: the answer is not defined, and it
    differs between machines. Such pairs cannot be reference values."""
    s1, s2 = (a, b) if len(a) <= len(b) else (b, a)
    half = (len(s1) + 1) // 2
    return len(s1) % 2 == 1 and s2[half - 1] == "\0"


def jaro_pairs(r: random.Random, n: int) -> list:
    out = [["hunting", "hunting"], ["brian", "jesus"], ["", ""], ["", "a"], ["ab", "ba"]]
    while len(out) < n:
        a = random_string(r)
        b = r.choice([random_string(r), a[::-1], a + random_string(r), a[1:]])
        if not reads_past_the_end(a, b):
            out.append([a, b])
    return [[a, b, f64_bits(Levenshtein.jaro(a, b))] for a, b in out]


def kurtosis_cases(r: random.Random, n: int) -> list:
    cases = [[1], [2], [100], [5, 3], [3] * 999, list(range(1, 1200)), [1] * 1500]
    while len(cases) < n:
        k = r.choice([1, 2, 3, 10, 50, 999, 1000, 1001, 1500])
        top = r.choice([1, 2, 5, 100, 10**6])
        cases.append(sorted((r.randint(1, top) for _ in range(k)), reverse=True))
    out = []
    for counts in cases:
        padded = sorted(counts, reverse=True) + [1] * max(0, 1000 - len(counts))
        out.append([counts, f64_bits(float(scipy.stats.kurtosis(padded)))])
    return out


def cosine_cases(rng: np.random.Generator, n: int) -> list:
    out = []
    for i in range(n):
        dim = 50 if i % 4 else int(rng.choice([1, 10, 31, 32, 33, 64, 100, 300]))
        a = rng.standard_normal(dim).astype(np.float32)
        b = rng.standard_normal(dim).astype(np.float32)
        if i % 10 == 0:
            b = (a * np.float32(rng.uniform(-2, 2))).astype(np.float32)
        c = np.dot(a, b) / (np.linalg.norm(b) * np.linalg.norm(a))
        out.append([[f32_bits(v) for v in a], [f32_bits(v) for v in b], f32_bits(c)])
    return out


# --------------------------------------------------------------------------- pickles


def expected_value(v):
    """JSON form of a value as the Rust test builds it: dicts as [[k, v], ...] pairs,
    float32 arrays as {"f32": [bits]}, numpy integers as int."""
    if isinstance(v, dict):
        return [[expected_value(k), expected_value(x)] for k, x in v.items()]
    if isinstance(v, np.ndarray):
        assert v.dtype.kind == "f" and v.dtype.itemsize == 4 and v.ndim == 1
        return {"f32": [f32_bits(x) for x in v]}
    if isinstance(v, np.integer):
        return int(v)
    return v


def pickle_cases() -> list:
    r = np.random.default_rng(5)
    vec = r.standard_normal(50).astype(np.float32)
    values = {
        "anchors-int": {"Exclamation mark": 1, "B": 300, "C": 70000, "D": 2**40, "E": -5, "F": 0},
        "anchors-numpy-int64": {"A": np.int64(3), "B": np.int64(2**33), "C": np.int64(-1)},
        "anchors-numpy-int32": {"A": np.int32(7)},
        "anchors-unicode": {"Café ☕": 2, "日本": 1},
        "redirect": "Target title",
        "pageid-small": 12,
        "pageid-large": 90000123,
        "pageid-long": 2**62,
        "pageid-numpy": np.int64(586),
        "vector": vec,
        "vector-big-endian": vec.astype(">f4"),
        "vector-empty": np.zeros(0, dtype=np.float32),
    }
    out = []
    for name, v in values.items():
        for proto in (2, 3, 4, 5):
            data = pickle.dumps(v, protocol=proto)
            exp = v.astype("<f4") if isinstance(v, np.ndarray) else v
            out.append([f"{name}/p{proto}", data.hex(), expected_value(exp)])
            if proto == 2 and isinstance(v, (np.ndarray, np.integer)):
                # numpy >= 2 writes the same pickles under the module numpy._core.
                moved = data.replace(b"numpy.core.multiarray", b"numpy._core.multiarray")
                out.append([f"{name}/p2-numpy2", moved.hex(), expected_value(exp)])
    return out


# --------------------------------------------------------------------------- parity digest


def mysql_unescape(s: bytes, i: int) -> tuple[bytes, int]:
    """Reads a '...' literal starting at s[i] == "'"; returns (bytes, index after)."""
    assert s[i : i + 1] == b"'"
    i += 1
    out = bytearray()
    table = {ord("0"): 0, ord("n"): 10, ord("r"): 13, ord("Z"): 26, ord("b"): 8, ord("t"): 9}
    while True:
        c = s[i]
        if c == 0x5C:
            e = s[i + 1]
            out.append(table.get(e, e))
            i += 2
        elif c == 0x27:
            if s[i + 1 : i + 2] == b"'":
                out.append(0x27)
                i += 2
            else:
                return bytes(out), i + 1
        else:
            out.append(c)
            i += 1


def dump_rows(path: Path):
    with gzip.open(path, "rb") as f:
        for line in f:
            if not line.startswith(b"INSERT INTO"):
                continue
            i = line.index(b"(") + 1
            i = line.index(b",", i) + 1
            key, i = mysql_unescape(line, i)
            value, _ = mysql_unescape(line, i + 1)
            yield key.decode("utf-8"), pickle.loads(value)


def parity_digest() -> dict:
    digest = {}
    for name in ("anchors", "redirects", "pageids", "w2vfiltered"):
        h = hashlib.sha256()
        rows = 0
        for key, value in sorted(dump_rows(PARITY / f"lr_enwiki_{name}.sql.gz")):
            rows += 1
            if name == "anchors":
                value = [[t, int(c)] for t, c in value.items()]
            elif name == "w2vfiltered":
                value = [f32_bits(v) for v in np.asarray(value, dtype=np.float32)]
            elif name == "pageids":
                value = int(value)
            h.update(json.dumps([key, value], ensure_ascii=False).encode("utf-8") + b"\n")
        digest[name] = {"rows": rows, "sha256": h.hexdigest()}
    return digest


# --------------------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--rows", type=int, default=120_000)
    ap.add_argument("--pairs", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=20260717)
    args = ap.parse_args()
    out: Path = args.out_dir
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    r = random.Random(args.seed)

    models = {
        "numerical": train_numerical(rng),
        "categorical": train_categorical(rng),
    }
    parity = XGBClassifier()
    parity.load_model(str(PARITY / "enwiki.linkmodel.json"))
    thresholds: list[float] = []
    for name, model in models.items():
        path = out / f"{name}.model.json"
        model.save_model(str(path))
        thresholds += split_values(json.loads(path.read_text()))
    thresholds += split_values(json.loads((PARITY / "enwiki.linkmodel.json").read_text()))
    models["parity"] = parity

    rows = make_rows(rng, args.rows, thresholds)
    rows.astype("<f8").tofile(out / "rows.f64")
    for name, model in models.items():
        # Upstream calls predict_proba on float64 rows; XGBoost casts them to float32.
        proba = model.predict_proba(rows)[:, 1].astype("<f4")
        proba.tofile(out / f"{name}.proba.f32")

    def write_jsonl(name: str, items: list) -> None:
        with open(out / name, "w", encoding="utf-8") as f:
            for item in items:
                f.write(json.dumps(item, ensure_ascii=False) + "\n")

    write_jsonl("jaro.jsonl", jaro_pairs(r, args.pairs))
    write_jsonl("kurtosis.jsonl", kurtosis_cases(r, max(60, min(2000, args.pairs // 100))))
    write_jsonl("cosine.jsonl", cosine_cases(rng, max(100, min(5000, args.pairs // 10))))
    write_jsonl("pickles.jsonl", pickle_cases())
    (out / "parity_digest.json").write_text(json.dumps(parity_digest(), indent=1) + "\n")
    manifest = {
        "rows": args.rows,
        "seed": args.seed,
        "python": sys.version.split()[0],
        "xgboost": xgboost.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "Levenshtein": getattr(Levenshtein, "__version__", "0.12.1"),
        "best_iteration": {"numerical": int(models["numerical"].best_iteration)},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
