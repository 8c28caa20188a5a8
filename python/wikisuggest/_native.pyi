"""Type stub of the compiled extension module (kept by hand; checked by mypy.stubtest)."""

from collections.abc import Awaitable, Callable
from os import PathLike
from typing import Any, final

from .models import LinkRecommendationSet

__all__ = [
    "__version__",
    "NativeClient",
    "NativeTokenManager",
    "NativeBatch",
    "NativeEngine",
    "NativeServer",
    "in_flight_tasks",
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
    def token(self) -> dict[str, Any]: ...
    def token_async(self) -> Awaitable[dict[str, Any]]: ...
    def renew_after_rejection(self, rejected: str) -> dict[str, Any] | None: ...
    def renew_after_rejection_async(self, rejected: str) -> Awaitable[dict[str, Any] | None]: ...

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
    def link_recommendations(
        self,
        project: str,
        domain: str,
        page_title: str,
        language_code: str | None,
        revision: int | None,
        threshold: float,
        sections_to_exclude: list[str],
        max_recommendations: int,
        raw: bool,
    ) -> Any: ...
    def link_recommendations_async(
        self,
        project: str,
        domain: str,
        page_title: str,
        language_code: str | None,
        revision: int | None,
        threshold: float,
        sections_to_exclude: list[str],
        max_recommendations: int,
        raw: bool,
    ) -> Awaitable[Any]: ...
    def link_recommendations_for_revision(
        self,
        project: str,
        domain: str,
        page_title: str,
        wikitext: str,
        revid: int,
        pageid: int,
        language_code: str | None,
        threshold: float,
        sections_to_exclude: list[str],
        max_recommendations: int,
        raw: bool,
    ) -> Any: ...
    def link_recommendations_for_revision_async(
        self,
        project: str,
        domain: str,
        page_title: str,
        wikitext: str,
        revid: int,
        pageid: int,
        language_code: str | None,
        threshold: float,
        sections_to_exclude: list[str],
        max_recommendations: int,
        raw: bool,
    ) -> Awaitable[Any]: ...
    def translation_recommendations(
        self,
        source: str,
        target: str,
        count: int,
        seed: list[str],
        topic: list[str],
        include_pageviews: bool,
        search_algorithm: str,
        rank_method: str,
        raw: bool,
    ) -> Any: ...
    def translation_recommendations_async(
        self,
        source: str,
        target: str,
        count: int,
        seed: list[str],
        topic: list[str],
        include_pageviews: bool,
        search_algorithm: str,
        rank_method: str,
        raw: bool,
    ) -> Awaitable[Any]: ...
    def client_credentials(self, client_id: str, client_secret: str) -> dict[str, Any]: ...
    def client_credentials_async(
        self, client_id: str, client_secret: str
    ) -> Awaitable[dict[str, Any]]: ...
    def authorization_code(
        self,
        code: str,
        client_id: str,
        client_secret: str | None = None,
        code_verifier: str | None = None,
        redirect_uri: str | None = None,
    ) -> dict[str, Any]: ...
    def authorization_code_async(
        self,
        code: str,
        client_id: str,
        client_secret: str | None = None,
        code_verifier: str | None = None,
        redirect_uri: str | None = None,
    ) -> Awaitable[dict[str, Any]]: ...
    def refresh_token(
        self, refresh_token: str, client_id: str, client_secret: str | None = None
    ) -> dict[str, Any]: ...
    def refresh_token_async(
        self, refresh_token: str, client_id: str, client_secret: str | None = None
    ) -> Awaitable[dict[str, Any]]: ...

@final
class NativeBatch:
    @staticmethod
    def links(
        client: NativeClient,
        items: list[tuple[str, str, str, str | None, int | None, float, list[str], int]],
        raw: bool,
    ) -> NativeBatch: ...
    @staticmethod
    def revisions(
        client: NativeClient,
        items: list[tuple[str, str, str, str, int, int, str | None, float, list[str], int]],
        raw: bool,
    ) -> NativeBatch: ...
    @staticmethod
    def translations(
        client: NativeClient,
        items: list[tuple[str, str, int, list[str], list[str], bool, str, str]],
        raw: bool,
    ) -> NativeBatch: ...
    @property
    def total(self) -> int: ...
    def next(self) -> list[tuple[int, bool, Any]]: ...
    def next_async(self) -> Awaitable[list[tuple[int, bool, Any]]]: ...
    def cancel(self) -> None: ...

@final
class NativeEngine:
    @staticmethod
    def open(path: str, wiki_id: str, application_version: str) -> NativeEngine: ...
    @staticmethod
    def convert(src_dir: str, wiki_id: str, out_dir: str) -> str: ...
    @property
    def wiki_id(self) -> str: ...
    def info(self) -> dict[str, Any]: ...
    def score(
        self, page_title: str, mention: str, language_code: str | None
    ) -> list[dict[str, Any]] | None: ...
    def recommend(
        self,
        wikitext: str,
        page_title: str,
        pageid: int | None,
        revid: int | None,
        language_code: str | None,
        threshold: float,
        max_recommendations: int,
        sections_to_exclude: list[str],
        time_budget: float | None,
    ) -> LinkRecommendationSet: ...
    def recommend_async(
        self,
        wikitext: str,
        page_title: str,
        pageid: int | None,
        revid: int | None,
        language_code: str | None,
        threshold: float,
        max_recommendations: int,
        sections_to_exclude: list[str],
        time_budget: float | None,
    ) -> Awaitable[Any]: ...
    def recommend_chunk(
        self,
        pages: list[tuple[str, str, int | None, int | None, str | None]],
        workers: int | None,
        language_code: str | None,
        threshold: float,
        max_recommendations: int,
        sections_to_exclude: list[str],
        time_budget: float | None,
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
class NativeServer:
    def __new__(
        cls,
        *,
        host: str,
        port: int,
        datasets: str | None = None,
        pages: str | None = None,
        translation: str | None = None,
        clients: str | None = None,
        seed: int | None = None,
        access_token_ttl: float = 14400.0,
        rate_limit: int = 200,
        anonymous_rate_limit: int = 200,
        max_body_bytes: int = 4194304,
        request_timeout: float = 30.0,
        threads: int = 2,
    ) -> NativeServer: ...
    @property
    def url(self) -> str: ...
    @property
    def running(self) -> bool: ...
    def stop(self) -> None: ...
