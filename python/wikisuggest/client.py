"""``Client`` and ``AsyncClient``: the three service operations, blocking and asyncio.

Both classes take the same arguments and have the same methods; ``AsyncClient``'s methods are
coroutines. Work happens in Rust on one shared I/O runtime; blocking calls release the GIL and
can be interrupted with Ctrl-C, asyncio calls can be cancelled.

Each operation is written once, in ``_async_client.py``; ``_sync_client.py`` is generated
from it (``scripts/unasync.py``).
"""

from __future__ import annotations

import atexit

from ._async_client import AsyncClient
from ._client_base import DEFAULT_BASE_URL, LinkOptions, TranslationOptions
from ._native import quiesce
from ._sync_client import Client
from .oauth import DEFAULT_AUTH_URL

# Let the I/O threads finish handing results to Python before the interpreter goes away.
atexit.register(quiesce)

__all__ = [
    "AsyncClient",
    "Client",
    "DEFAULT_AUTH_URL",
    "DEFAULT_BASE_URL",
    "LinkOptions",
    "TranslationOptions",
]
