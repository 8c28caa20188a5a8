"""Type stub of the compiled extension module (kept by hand; checked by mypy.stubtest)."""

from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from os import PathLike
from typing import Any, Generic, Literal, TypeVar, final, overload

from ._args import (
    CodeGrantArgs,
    EngineOptions,
    LinkArgs,
    ManagerArgs,
    MembershipArgs,
    NativePage,
    TranslationArgs,
)
from .batch import BatchItem, Plan
from .records import ExplainedResult, LinkRecommendationSet, TranslationRecommendation

_T = TypeVar("_T")
#: A token as the store keeps it (the Python layer makes it a ``Token``).
_TokenDict = dict[str, Any]

__all__ = [
    "CLASS_TABLE_HEADER",
    "ENGINE_DEFAULTS",
    "LINK_DEFAULTS",
    "LINK_ROWS_SPARK_DDL",
    "MAX_TITLE_BYTES",
    "SIMILAR_DEFAULTS",
    "TRANSLATION_DEFAULTS",
    "NativeArrowBatch",
    "NativeBatch",
    "NativeCall",
    "NativeClient",
    "NativeDatasetBuild",
    "NativeDownloader",
    "NativeDumpRows",
    "NativeEngine",
    "NativeEngineBatch",
    "NativeGroup",
    "NativeLinkRules",
    "NativePlainText",
    "NativeRowChunks",
    "NativeServer",
    "NativeTokenManager",
    "NativeTranslationEngine",
    "NativeWiki",
    "__version__",
    "authorization_url",
    "backtest_dataset",
    "build_translation_catalog",
    "build_translation_collections",
    "class_table_row",
    "convert_dataset",
    "dataset_drift",
    "dump_wiki",
    "file_store_load",
    "file_store_save",
    "in_flight_tasks",
    "is_wikidata_item",
    "link_rows",
    "link_rows_schema",
    "page_links",
    "page_sections",
    "parse_redirect",
    "quiesce",
    "rules_preview",
    "title_problem",
    "translation_constants",
    "wiki_domain",
    "wiki_id",
    "wiki_language",
]

#: What the rules removed from a page: each link with its rule and the rule's entry, and the
#: rule that removed the whole page, if one did.

__version__: str

#: The defaults of every link operation's options (``language_code``, ``threshold``,
#: ``max_recommendations``, ``sections_to_exclude``), of the translation operations' and of the
#: local engine's pass options: read-only, written once in the crates.
LINK_DEFAULTS: Mapping[str, Any]
TRANSLATION_DEFAULTS: Mapping[str, Any]
ENGINE_DEFAULTS: Mapping[str, Any]
SIMILAR_DEFAULTS: Mapping[str, Any]
#: The longest title MediaWiki accepts, in UTF-8 bytes.
MAX_TITLE_BYTES: int

def wiki_id(name: str) -> str: ...
def wiki_language(wiki_id: str) -> str: ...
def wiki_domain(wiki_id: str) -> str: ...
def title_problem(title: str) -> str | None: ...
def in_flight_tasks() -> int: ...
def quiesce() -> None: ...
def authorization_url(
    auth_url: str,
    client_id: str,
    redirect_uri: str | None = None,
    scope: str | None = None,
    state: str | None = None,
) -> tuple[str, str, str]: ...
def parse_redirect(redirect: str, expected_state: str) -> str: ...
def file_store_load(path: str | PathLike[str]) -> dict[str, Any] | None: ...
def file_store_save(path: str | PathLike[str], token: dict[str, Any]) -> None: ...

@final
class NativeTokenManager:
    @staticmethod
    def client_credentials(
        client_id: str, client_secret: str, options: ManagerArgs
    ) -> NativeTokenManager: ...
    @staticmethod
    def refresh(
        refresh_token: str | None,
        client_id: str,
        client_secret: str | None,
        token: dict[str, Any] | None,
        options: ManagerArgs,
    ) -> NativeTokenManager: ...
    @staticmethod
    def personal(token: str) -> NativeTokenManager: ...
    @property
    def kind(self) -> str: ...
    @property
    def client_id(self) -> str | None: ...
    @property
    def auth_url(self) -> str | None: ...
    @property
    def leeway(self) -> float: ...
    def token(self) -> NativeCall[_TokenDict]: ...
    def renew_rejected(self, rejected: str) -> NativeCall[_TokenDict | None]: ...

@final
class NativeClient:
    def __new__(
        cls,
        *,
        base_url: str,
        auth_url: str,
        user_agent: str,
        timeout: float,
        connect_timeout: float,
        max_retries: int,
        backoff_base: float,
        backoff_max: float,
        max_retry_after: float,
        max_concurrency: int | None = None,
        rate_limit: float | str | None = None,
        token: str | None = None,
        manager: NativeTokenManager | None = None,
        max_body_size: int | None = None,
        allow_insecure_http: bool = False,
    ) -> NativeClient: ...
    @property
    def base_url(self) -> str: ...
    @property
    def auth_url(self) -> str: ...
    @property
    def user_agent(self) -> str: ...
    @property
    def max_concurrency(self) -> int: ...
    # With raw, the response's JSON; without, the records.
    def link_recommendations(
        self, args: LinkArgs, raw: bool
    ) -> NativeCall[LinkRecommendationSet | dict[str, Any]]: ...
    def translation_recommendations(
        self, args: TranslationArgs, raw: bool
    ) -> NativeCall[list[TranslationRecommendation] | list[dict[str, Any]] | dict[str, Any]]: ...
    def page_collections(self) -> NativeCall[list[dict[str, Any]]]: ...
    def page_collection_groups(self) -> NativeCall[dict[str, Any]]: ...
    def page_collection_membership(self, args: MembershipArgs) -> NativeCall[dict[str, Any]]: ...
    def client_credentials(self, client_id: str, client_secret: str) -> NativeCall[_TokenDict]: ...
    def authorization_code(self, args: CodeGrantArgs) -> NativeCall[_TokenDict]: ...
    def refresh_token(
        self, refresh_token: str, client_id: str, client_secret: str | None = None
    ) -> NativeCall[_TokenDict]: ...

@final
class NativeCall(Generic[_T]):
    # A prepared operation; its value is the operation's (the method that made it says which).
    def send(self) -> _T: ...
    def send_async(self) -> Awaitable[_T]: ...

# The protocol of every native batch (`wikisuggest.batch.NativeBatch`): `next` appends the
# next finished items to its sink (False at the end), `interrupt` stops and returns every item
# not returned yet that can be settled, `cancel` stops.
@final
class NativeBatch(Generic[_T]):
    @staticmethod
    def links(
        client: NativeClient, items: list[LinkArgs], raw: bool, origin: Plan[Any]
    ) -> NativeBatch[LinkRecommendationSet | dict[str, Any]]: ...
    @staticmethod
    def translations(
        client: NativeClient, items: list[TranslationArgs], raw: bool, origin: Plan[Any]
    ) -> NativeBatch[list[TranslationRecommendation] | list[dict[str, Any]] | dict[str, Any]]: ...
    def next(self, sink: deque[BatchItem[_T]]) -> bool: ...
    def next_async(self) -> Awaitable[NativeGroup[_T]]: ...
    def interrupt(self) -> list[BatchItem[_T]]: ...
    def cancel(self) -> None: ...

@final
class NativeGroup(Generic[_T]):
    def items(self) -> list[BatchItem[_T]]: ...

@final
class NativeEngine:
    @staticmethod
    def open(path: str, wiki_id: str, application_version: str, verify: bool) -> NativeEngine: ...
    def verify(self) -> None: ...
    def link_targets(self) -> list[str]: ...
    @property
    def wiki_id(self) -> str: ...
    def info(self) -> dict[str, Any]: ...
    def score(
        self, page_title: str, mention: str, language_code: str | None
    ) -> list[dict[str, Any]] | None: ...
    @overload
    def recommend(
        self, page: NativePage, options: EngineOptions, explain: Literal[False] = False
    ) -> NativeCall[LinkRecommendationSet]: ...
    @overload
    def recommend(
        self, page: NativePage, options: EngineOptions, explain: Literal[True]
    ) -> NativeCall[ExplainedResult]: ...
    @overload
    def batch(
        self, workers: int | None, options: EngineOptions, explain: Literal[False] = False
    ) -> NativeEngineBatch[LinkRecommendationSet]: ...
    @overload
    def batch(
        self, workers: int | None, options: EngineOptions, explain: bool
    ) -> NativeEngineBatch[LinkRecommendationSet | ExplainedResult]: ...

@final
class NativeLinkRules:
    @staticmethod
    def from_spec(spec: dict[str, Any]) -> NativeLinkRules: ...
    @staticmethod
    def load(path: str | PathLike[str]) -> NativeLinkRules: ...
    def spec(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...
    def to_toml(self) -> str: ...
    def page_exclusion(
        self, wikitext: str, templates: list[str] = ..., categories: list[str] = ...
    ) -> tuple[str, str] | None: ...
    def link_exclusion(self, link_text: str, target: str) -> tuple[str, str] | None: ...

def page_links(wikitext: str) -> list[tuple[int, int, int, str, str | None, str]]: ...
def page_sections(wikitext: str) -> list[tuple[str | None, int]]: ...
def class_table_row(title: str, item: str, p31: list[str]) -> str: ...
def is_wikidata_item(id: str) -> bool: ...

CLASS_TABLE_HEADER: str

# The engine's batch: `push`/`refuse` feed it pages in input order, and it speaks the protocol
# of `NativeBatch`, items in input order.
@final
class NativeEngineBatch(Generic[_T]):
    def push(self, index: int, input: object, page: NativePage) -> None: ...
    def refuse(self, index: int, input: object, error: BaseException) -> None: ...
    def pending(self) -> int: ...
    def next(self, sink: deque[BatchItem[_T]]) -> bool: ...
    def next_async(self) -> Awaitable[NativeGroup[_T]]: ...
    def interrupt(self) -> list[BatchItem[_T]]: ...
    def cancel(self) -> None: ...

@final
class NativeDatasetBuild:
    def __new__(
        cls,
        dump: str,
        wiki_id: str,
        language_code: str,
        min_link_probability: float,
        min_link_count: int,
        keep_missing_targets: bool,
        exclude_held_out: float | None = None,
    ) -> NativeDatasetBuild: ...
    def stats(self) -> dict[str, int]: ...
    def set_word_vectors(self, words: list[str], dim: int, data: bytes) -> None: ...
    def set_link_graph_vectors(self, dim: int, seed: int) -> None: ...
    def training_rows(
        self, holdout_fraction: float, max_train_articles: int, max_test_articles: int
    ) -> tuple[bytes, bytes, int, int]: ...
    def write(self, out_dir: str, model_json: bytes) -> tuple[dict[str, str], PathLike[str]]: ...

def backtest_dataset(
    dump: str,
    data_dir: str,
    wiki_id: str,
    language_code: str,
    thresholds: list[float],
    holdout_fraction: float,
    max_test_articles: int,
    reference_dir: str | None = None,
) -> tuple[list[tuple[float, int, int, int]], int]: ...

#: The link rows' schema as a Spark DDL string.
LINK_ROWS_SPARK_DDL: str

@final
class NativeArrowBatch:
    """A record batch of link rows: ``pyarrow.record_batch(batch)`` takes it without a copy."""

    def __arrow_c_array__(
        self, requested_schema: object | None = None
    ) -> tuple[object, object]: ...
    def __len__(self) -> int: ...

@final
class NativeDumpRows:
    def __new__(
        cls,
        engine: NativeEngine,
        path: str | PathLike[str],
        options: EngineOptions,
        *,
        wiki_db: str,
        pages_per_batch: int,
        rows_per_batch: int,
        workers: int | None,
        max_page_bytes: int,
    ) -> NativeDumpRows: ...
    def start(self, skip_pages: int) -> None: ...
    def next_batch(self) -> dict[str, Any] | None: ...
    def close(self) -> None: ...

@final
class NativeRowChunks:
    def __iter__(self) -> NativeRowChunks: ...
    def __next__(self) -> NativeArrowBatch: ...

def rules_preview(
    engine: NativeEngine,
    pages: str | list[NativePage],
    before: EngineOptions,
    after: EngineOptions,
    *,
    sample: int | None,
    workers: int | None,
) -> dict[str, Any]: ...
def link_rows(
    pages: object,
    engines: dict[str, NativeEngine],
    refused: dict[str, str],
    options: EngineOptions,
    chunk_bytes: int,
) -> NativeRowChunks: ...
def link_rows_schema() -> NativeArrowBatch: ...

@final
class NativeWiki:
    def __new__(
        cls,
        *,
        api_url: str,
        user_agent: str,
        timeout: float,
        max_retries: int,
        maxlag: int | None = None,
        token: str | None = None,
        manager: NativeTokenManager | None = None,
        max_body_size: int | None = None,
        allow_insecure_http: bool = False,
    ) -> NativeWiki: ...
    @property
    def api_url(self) -> str: ...
    # page: `(title, pageid, revid, wikitext)` or None; edit: `(title, pageid, old_revid,
    # new_revid, nochange)`; siteinfo: the fields of `SiteInfo` by name.
    def page(
        self, title: str | None = None, revid: int | None = None
    ) -> NativeCall[tuple[str, int, int, str] | None]: ...
    def siteinfo(self) -> NativeCall[dict[str, Any]]: ...
    def login(self, username: str, password: str) -> NativeCall[None]: ...
    def read(self, params: list[tuple[str, str]]) -> NativeCall[str]: ...
    def edit(
        self,
        title: str,
        text: str,
        baserevid: int,
        summary: str,
        tags: list[str],
        minor: bool,
        bot: bool,
    ) -> NativeCall[tuple[str, int, int | None, int | None, bool]]: ...

@final
class NativePlainText:
    """The engine's partition of a page into plain text and markup (code point offsets)."""

    def __new__(cls, text: str) -> NativePlainText: ...
    def __len__(self) -> int: ...
    def text_runs(self) -> list[tuple[int, int]]: ...
    def node_at(self, offset: int) -> tuple[str, int, int] | None: ...
    def hidden_from(self) -> int | None: ...
    def is_text(self, start: int, end: int) -> bool: ...
    def occurrences(self, phrase: str) -> list[int]: ...
    def link_targets(self) -> list[str]: ...

@final
class NativeServer:
    def __new__(
        cls,
        *,
        host: str,
        port: int,
        datasets: str | None = None,
        pages: str | None = None,
        wiki_apis: list[tuple[str, str]] = ...,
        rules: list[tuple[str, str]] = ...,
        translation_catalogs: list[tuple[str | None, str]] = ...,
        clients: str | None = None,
        seed: int | None = None,
        access_token_ttl: float = 14400.0,
        rate_limit: int = 200,
        anonymous_rate_limit: int = 200,
        translation_shape: str = "array",
        max_body_bytes: int = 4194304,
        request_timeout: float = 30.0,
        threads: int = 2,
        max_connections: int = 0,
        max_connections_per_address: int = 0,
        link_time_budget: float = 5.0,
    ) -> NativeServer: ...
    @property
    def url(self) -> str: ...
    @property
    def wikis(self) -> list[str]: ...
    @property
    def running(self) -> bool: ...
    def reload_datasets(self) -> list[tuple[str, str]]: ...
    def stop(self) -> None: ...

@final
class NativeTranslationEngine:
    @staticmethod
    def open(path: str) -> NativeTranslationEngine: ...
    def manifest(self) -> str: ...
    def __len__(self) -> int: ...
    def recommend(
        self,
        args: TranslationArgs,
        random_seed: int | None = None,
        follow_redirects: bool = False,
    ) -> NativeCall[dict[str, Any]]: ...
    def similar(
        self,
        seeds: list[str],
        limit: int,
        *,
        min_term_freq: int | None,
        min_doc_freq: int | None,
        max_query_terms: int | None,
        minimum_should_match: str | None,
    ) -> NativeCall[list[tuple[str, float]]]: ...
    def missing(
        self,
        targets: list[str],
        *,
        topic: list[str],
        country: list[str],
        titles: list[str] | None,
        wikidata_ids: list[str] | None,
        category: str | None,
        min_size: int | None,
        max_size: int | None,
        order_by: str,
    ) -> NativeCall[NativeArrowBatch]: ...

def build_translation_catalog(
    spec: Mapping[str, Any],
    out: str,
    progress: Callable[[str, int], object] | None = None,
) -> str: ...
def build_translation_collections(
    pages_articles: str, iwlinks: str, items_per_site: str, out: str
) -> int: ...
def translation_constants() -> dict[str, Any]: ...

@final
class NativeDownloader:
    def __new__(
        cls,
        user_agent: str,
        connect_timeout: float,
        read_timeout: float,
        max_retries: int,
        backoff_base: float,
        backoff_max: float,
        max_retry_after: float,
        max_attempts: int,
        bytes_factor: int,
    ) -> NativeDownloader: ...
    def head(self, url: str) -> dict[str, Any] | None: ...
    def head_many(
        self, urls: list[str], concurrency: int | None = None
    ) -> list[dict[str, Any] | BaseException | None]: ...
    def get(self, url: str, limit: int) -> tuple[bytes, dict[str, Any]] | None: ...
    def download(
        self,
        url: str,
        dest: str,
        checksum: tuple[str, str] | None,
        max_size: int,
        progress: Callable[[int, int | None], object] | None = None,
    ) -> dict[str, Any]: ...

def convert_dataset(
    src_dir: str,
    wiki_id: str,
    out_dir: str,
    progress: Callable[[int, int | None, str], object] | None = None,
    sort_budget: int | None = None,
    work_budget: int | None = None,
) -> str: ...
def dataset_drift(published: str, current: str, examples: int) -> dict[str, Any]: ...
def dump_wiki(dump: str) -> str | None: ...
