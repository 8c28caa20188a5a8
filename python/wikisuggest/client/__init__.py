"""``Client`` and ``AsyncClient``: the three service operations, blocking and asyncio.

Both classes take the same arguments and have the same methods; ``AsyncClient``'s methods are
coroutines. Work happens in Rust on one shared I/O runtime; blocking calls release the GIL and
can be interrupted with Ctrl-C, asyncio calls can be cancelled.

Each operation is written once, in ``_async.py``; ``_sync.py`` is generated
from it (``scripts/unasync.py``).
"""

from __future__ import annotations

import atexit

from .._native import quiesce
from ..auth.manager import DEFAULT_AUTH_URL
from ._async import AsyncClient
from ._base import DEFAULT_BASE_URL, LinkOptions, TranslationOptions
from ._sync import Client
from .browser_flow import authorize_with_loopback

# Let the I/O threads finish handing results to Python before the interpreter goes away.
atexit.register(quiesce)

__all__ = [
    "DEFAULT_AUTH_URL",
    "DEFAULT_BASE_URL",
    "AsyncClient",
    "Client",
    "LinkOptions",
    "TranslationOptions",
    "authorize_with_loopback",
]
