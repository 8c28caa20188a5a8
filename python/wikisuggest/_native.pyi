"""Type stub of the compiled extension module (kept by hand; checked by mypy.stubtest)."""

from collections.abc import Awaitable
from os import PathLike
from typing import Any, Generic, Literal, TypeVar, final, overload

from .batch import BatchItem, Plan
from .records import LinkRecommendationSet, TranslationRecommendation

_T = TypeVar("_T")
#: A token as the store keeps it (the Python layer makes it a ``Token``).
_TokenDict = dict[str, Any]

__all__ = [
    "NativeBatch",
    "NativeBatchStream",
    "NativeCall",
    "NativeClient",
    "NativeDatasetBuild",
    "NativeDumpPages",
    "NativeEngine",
    "NativeGroup",
    "NativePlainText",
    "NativeServer",
    "NativeTokenManager",
    "NativeWiki",
    "__version__",
    "authorization_url",
    "backtest_dataset",
    "file_store_load",
    "file_store_save",
    "in_flight_tasks",
    "parse_redirect",
    "quiesce",
]

__version__: str

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
        client_id: str, client_secret: str, options: dict[str, Any]
    ) -> NativeTokenManager: ...
    @staticmethod
    def refresh(
        refresh_token: str | None,
        client_id: str,
        client_secret: str | None,
        token: dict[str, Any] | None,
        options: dict[str, Any],
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
        self, args: dict[str, Any], raw: bool
    ) -> NativeCall[LinkRecommendationSet | dict[str, Any]]: ...
    def translation_recommendations(
        self, args: dict[str, Any], raw: bool
    ) -> NativeCall[list[TranslationRecommendation] | list[dict[str, Any]] | dict[str, Any]]: ...
    def page_collections(self) -> NativeCall[list[dict[str, Any]]]: ...
    def page_collection_groups(self) -> NativeCall[dict[str, Any]]: ...
    def page_collection_membership(self, args: dict[str, Any]) -> NativeCall[dict[str, Any]]: ...
    def client_credentials(self, client_id: str, client_secret: str) -> NativeCall[_TokenDict]: ...
    def authorization_code(
        self,
        code: str,
        client_id: str,
        client_secret: str | None = None,
        code_verifier: str | None = None,
        redirect_uri: str | None = None,
    ) -> NativeCall[_TokenDict]: ...
    def refresh_token(
        self, refresh_token: str, client_id: str, client_secret: str | None = None
    ) -> NativeCall[_TokenDict]: ...

@final
class NativeCall(Generic[_T]):
    # A prepared operation; its value is the operation's (the method that made it says which).
    def send(self) -> _T: ...
    def send_async(self) -> Awaitable[_T]: ...

@final
class NativeBatch:
    @staticmethod
    def links(client: NativeClient, items: list[dict[str, Any]], raw: bool) -> NativeBatch: ...
    @staticmethod
    def translations(
        client: NativeClient, items: list[dict[str, Any]], raw: bool
    ) -> NativeBatch: ...
    @property
    def total(self) -> int: ...
    def next(self, origin: Plan[_T]) -> list[BatchItem[_T]]: ...
    def next_async(self) -> Awaitable[NativeGroup]: ...
    def cancel(self) -> None: ...

@final
class NativeGroup:
    def items(self, origin: Plan[_T]) -> list[BatchItem[_T]]: ...

@final
class NativeEngine:
    @staticmethod
    def open(path: str, wiki_id: str, application_version: str, verify: bool) -> NativeEngine: ...
    @staticmethod
    def convert(src_dir: str, wiki_id: str, out_dir: str) -> str: ...
    def verify(self) -> None: ...
    @property
    def wiki_id(self) -> str: ...
    def info(self) -> dict[str, Any]: ...
    def score(
        self, page_title: str, mention: str, language_code: str | None
    ) -> list[dict[str, Any]] | None: ...
    @overload
    def recommend(
        self,
        page: tuple[str, str, int | None, int | None, str | None],
        options: dict[str, Any],
        send_async: Literal[False] = False,
    ) -> LinkRecommendationSet: ...
    @overload
    def recommend(
        self,
        page: tuple[str, str, int | None, int | None, str | None],
        options: dict[str, Any],
        send_async: Literal[True],
    ) -> Awaitable[LinkRecommendationSet]: ...
    def stream(self, workers: int | None, options: dict[str, Any]) -> NativeBatchStream: ...

@final
class NativeBatchStream:
    def push(self, page: tuple[str, str, int | None, int | None, str | None]) -> None: ...
    def pending(self) -> int: ...
    def take(self) -> tuple[list[tuple[bool, Any] | None], BaseException | None]: ...
    def close(self) -> None: ...

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
) -> tuple[list[tuple[float, int, int, int]], int]: ...

@final
class NativeDumpPages:
    def __new__(
        cls,
        path: str | PathLike[str],
        namespaces: list[int],
        skip_redirects: bool,
        skip_pages: int,
        max_pages: int,
        max_bytes: int,
    ) -> NativeDumpPages: ...
    def next_batch(self) -> tuple[list[tuple[int, int | None, str, str]], int] | None: ...

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
    # new_revid, nochange)`; siteinfo: `(lang, first_letter_case, legal_title_chars,
    # namespace_names, interwiki_prefixes, behaviour_switches)`.
    def page(
        self, title: str | None = None, revid: int | None = None
    ) -> NativeCall[tuple[str, int, int, str] | None]: ...
    def siteinfo(
        self,
    ) -> NativeCall[tuple[str, bool, str, list[str], list[str], list[str]]]: ...
    def login(self, username: str, password: str) -> NativeCall[None]: ...
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
        translation: str | None = None,
        clients: str | None = None,
        seed: int | None = None,
        access_token_ttl: float = 14400.0,
        rate_limit: int = 200,
        anonymous_rate_limit: int = 200,
        translation_shape: str = "array",
        max_body_bytes: int = 4194304,
        request_timeout: float = 30.0,
        threads: int = 2,
    ) -> NativeServer: ...
    @property
    def url(self) -> str: ...
    @property
    def running(self) -> bool: ...
    def stop(self) -> None: ...
