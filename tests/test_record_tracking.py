"""Records that hold only atomic values are left out of the cyclic garbage collector."""

from __future__ import annotations

import gc

from support.clients import USER_AGENT
from support.contract_server import ContractServer, Scripted, link_set

import wikisuggest


def test_atomic_records_are_untracked_containers_stay_tracked(
    contract_server: ContractServer,
) -> None:
    client = wikisuggest.Client(USER_AGENT, base_url=contract_server.url, max_retries=0)
    result = client.link_recommendations("wikipedia", "en", "Cat")
    assert result.meta is not None and result.meta.dataset_checksums is not None
    # A batch keeps hundreds of thousands of these; every collection would visit each one.
    assert not any(gc.is_tracked(link) for link in result.links)
    assert not gc.is_tracked(result.meta) and not gc.is_tracked(result.meta.dataset_checksums)
    # The response holds its links in a tuple, a container: it stays with the collector.
    assert gc.is_tracked(result)
    gc.collect()
    assert result.to_dict() == link_set("Cat")

    contract_server.then(
        Scripted(200, {"links": [{"link_text": "a", "link_target": "A", "new": [1]}]})
    )
    with_extra = client.link_recommendations("wikipedia", "en", "Cat")
    # An extra field is a mutable dict, which could close a cycle: tracked as usual.
    assert gc.is_tracked(with_extra.links[0])
    assert with_extra.links[0].extra == {"new": [1]}
