"""Type stub of the compiled extension module (kept by hand; checked by mypy.stubtest)."""

from collections.abc import Awaitable, Callable
from os import PathLike
from typing import Any, Literal, final, overload

from .models import LinkRecommendationSet

__all__ = [
    "__version__",
    "NativeClient",
    "NativeCall",
    "NativeTokenManager",
    "NativeWiki",
    "NativeBatch",
    "NativeEngine",
    "NativeServer",
    "in_flight_tasks",
    "quiesce",
    "authorization_url",
    "parse_redirect",
    "file_store_load",
    "file_store_save",
    "NativeDatasetBuild",
    "backtest_dataset",
    "NativeDumpPages",
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
        client_id: str,
        client_secret: str,
        *,
        auth_url: str | None = None,
        user_agent: str | None = None,
        leeway: float = 300.0,
        store_path: str | PathLike[str] | None = None,
        store_load: Callable[[], Any] | None = None,
        store_save: Callable[[Any], Any] | None = None,
    ) -> NativeTokenManager: ...
    @staticmethod
    def refresh(
        refresh_token: str | None,
        client_id: str,
        client_secret: str | None = None,
        *,
        token: dict[str, Any] | None = None,
        auth_url: str | None = None,
        user_agent: str | None = None,
        leeway: float = 300.0,
        store_path: str | PathLike[str] | None = None,
        store_load: Callable[[], Any] | None = None,
        store_save: Callable[[Any], Any] | None = None,
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
    def token(self) -> NativeCall: ...
    def renew_rejected(self, rejected: str) -> NativeCall: ...

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
    def link_recommendations(self, args: dict[str, Any], raw: bool) -> NativeCall: ...
    def translation_recommendations(self, args: dict[str, Any], raw: bool) -> NativeCall: ...
    def page_collections(self) -> NativeCall: ...
    def page_collection_groups(self) -> NativeCall: ...
    def page_collection_membership(self, args: dict[str, Any]) -> NativeCall: ...
    def client_credentials(self, client_id: str, client_secret: str) -> NativeCall: ...
    def authorization_code(
        self,
        code: str,
        client_id: str,
        client_secret: str | None = None,
        code_verifier: str | None = None,
        redirect_uri: str | None = None,
    ) -> NativeCall: ...
    def refresh_token(
        self, refresh_token: str, client_id: str, client_secret: str | None = None
    ) -> NativeCall: ...

@final
class NativeCall:
    # The value is the operation's: a record (or its JSON with raw), or a token's dict; the
    # Python layer states which.
    def send(self) -> Any: ...
    def send_async(self) -> Awaitable[Any]: ...

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
    def next(self) -> list[tuple[int, bool, Any]]: ...
    def next_async(self) -> Awaitable[list[tuple[int, bool, Any]]]: ...
    def cancel(self) -> None: ...

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
    def recommend_chunk(
        self,
        pages: list[tuple[str, str, int | None, int | None, str | None]],
        workers: int | None,
        options: dict[str, Any],
    ) -> tuple[list[tuple[bool, Any] | None], BaseException | None]: ...

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
    ) -> NativeWiki: ...
    @property
    def api_url(self) -> str: ...
    # Each returns a NativeCall whose value is: page, `(title, pageid, revid, wikitext)` or
    # None; login, None; edit, `(title, pageid, old_revid, new_revid, nochange)`.
    def page(self, title: str | None = None, revid: int | None = None) -> NativeCall: ...
    def login(self, username: str, password: str) -> NativeCall: ...
    def edit(
        self,
        title: str,
        text: str,
        baserevid: int,
        summary: str,
        tags: list[str],
        minor: bool,
        bot: bool,
    ) -> NativeCall: ...

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
