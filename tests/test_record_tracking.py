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
    # Its tuple of untracked links is left out at once (CPython would at its first
    # collection), and so is the response that holds it.
    assert not gc.is_tracked(result.links) and not gc.is_tracked(result)
    gc.collect()
    assert result.to_dict() == link_set("Cat")

    contract_server.then(
        Scripted(200, {"links": [{"link_text": "a", "link_target": "A", "new": [1]}]})
    )
    with_extra = client.link_recommendations("wikipedia", "en", "Cat")
    # An extra field is a mutable dict, which could close a cycle: tracked as usual, and so
    # are the tuple and the response that hold it.
    assert gc.is_tracked(with_extra.links[0])
    assert gc.is_tracked(with_extra.links) and gc.is_tracked(with_extra)
    assert with_extra.links[0].extra == {"new": [1]}


def test_batch_items_of_atomic_results_are_untracked(contract_server: ContractServer) -> None:
    client = wikisuggest.Client(USER_AGENT, base_url=contract_server.url, max_retries=0)
    items = client.link_recommendations_many(["Cat", "Dog"], domain="en")
    assert [item.result.page_title for item in items if item.result] == ["Cat", "Dog"]
    # A title and an atomic response: a batch's items leave the collector nothing to visit.
    assert not any(gc.is_tracked(item) for item in items)

    contract_server.then(Scripted(404, {"detail": "no such page"}))
    failed = client.link_recommendations_many(["Nope"], domain="en")[0]
    # An error is an exception instance, a container: its item stays tracked.
    assert failed.error is not None and gc.is_tracked(failed)
