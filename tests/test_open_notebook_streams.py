"""Pull streams of the open-notebook reference (step order, metadata, completion, expiry,
session binding, unguessable tokens) and per-session context over Streamable HTTP."""

from __future__ import annotations

import math
import os
import re
import sys
import time
from collections import Counter

import pytest

from contract_tests.synthetic import notebook_generator as fixture
from contract_tests.transport.http import HttpServer, free_port
from contract_tests.transport.process import private_environment
from tests.test_open_notebook_reference import A, B, Client

STEPS = ["reference_identifiers", "passages", "dense_sections", "artifact_links"]
PAYLOAD = {"reference_identifiers": "references", "passages": "passages", "dense_sections": "sections",
           "artifact_links": "artifacts"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> fixture.GeneratedRoot:
    return fixture.build(tmp_path_factory.mktemp("on-streams") / "root", seed=13)


@pytest.fixture(scope="module")
def pair(built, tmp_path_factory):
    """Two stdio sessions: a short token lifetime and small chunks, so expiry and chunking show."""
    home = tmp_path_factory.mktemp("on-streams-home")
    clients = [Client.stdio(built.root, home, "--stream-timeout", "1.5", "--stream-chunk-size", "3")
               for _ in range(2)]
    yield clients
    for client in clients:
        client.close()


def walk(client: Client, token: str) -> tuple[list[dict], dict]:
    chunks = []
    while True:
        body = client.ok("next_stream_chunk", stream_token=token)
        if body["chunk_type"] == "stream_complete":
            return chunks, body
        chunks.append(body)
        assert len(chunks) < 100


def test_begin_result_stream_discloses_its_policy_and_returns_no_content(pair, built):
    client = pair[0]
    client.ok("enter_collection", collection_id=A)
    query = built.collections[A].passage("probe").query
    body = client.ok("begin_result_stream", query=query)
    assert set(body) == {"stream_token", "query", "disclosure_policy", "metadata", "note"}
    assert body["query"] == query
    assert body["disclosure_policy"] == {"step_order": STEPS, "chunk_strategy": "progressive_depth",
                                         "cancelable": True, "timeout_s": 1.5}
    assert body["note"] == "No content returned. Use next_stream_chunk to retrieve incrementally."
    assert isinstance(body["metadata"]["estimated_chunks"], int) and isinstance(body["metadata"]["created_at"], int)


def test_next_stream_chunk_walks_the_steps_in_order_explaining_each_then_completes(pair, built):
    client = pair[0]
    client.ok("enter_collection", collection_id=A)
    probe = built.collections[A].passage("probe")
    begun = client.ok("begin_result_stream", query=probe.query)
    token = begun["stream_token"]
    chunks, done = walk(client, token)
    assert len(chunks) == begun["metadata"]["estimated_chunks"]
    order = [c["chunk_type"] for c in chunks]
    assert order == sorted(order, key=STEPS.index) and set(order) == set(STEPS)
    for index, chunk in enumerate(chunks):
        step = STEPS.index(chunk["chunk_type"])
        assert chunk["chunk_index"] == index and chunk["stream_token"] == token
        meta = chunk["stream_metadata"]
        assert meta["what_changed"] and meta["why"]
        assert meta["progress"] == {"current_step": chunk["chunk_type"], "completed_steps": STEPS[:step],
                                    "remaining_steps": STEPS[step + 1:]}
        assert chunk["continuation"] == {"has_more": True, "next_chunk_available": True,
                                         "estimated_remaining": len(chunks) - index - 1}
        assert len(chunk["payload"][PAYLOAD[chunk["chunk_type"]]]) <= 3
    references = [r for c in chunks if c["chunk_type"] == "reference_identifiers" for r in c["payload"]["references"]]
    assert references[0]["reference_id"] == probe.source_id and len(references) == 10
    passages = [p for c in chunks if c["chunk_type"] == "passages" for p in c["payload"]["passages"]]
    assert passages[0]["exact_text"] == probe.exact_text
    assert [p["source_id"] for p in passages] == [r["reference_id"] for r in references]
    sections = [s for c in chunks if c["chunk_type"] == "dense_sections" for s in c["payload"]["sections"]]
    assert all(len(s["context_before"]) <= 500 and len(s["context_after"]) <= 500 for s in sections)
    links = [a for c in chunks if c["chunk_type"] == "artifact_links" for a in c["payload"]["artifacts"]]
    assert links and all(set(a) == {"artifact_id", "artifact_set_id", "artifact_type", "status"} for a in links)
    assert all(r["reference_id"].startswith(f"{A}:") for r in references)
    assert all(a["artifact_id"].startswith(f"{A}:") for a in links)
    assert done == {"stream_token": token, "chunk_type": "stream_complete",
                    "summary": {"total_chunks": len(chunks), "total_references": 10, "query": probe.query},
                    "continuation": {"has_more": False, "stream_closed": True}}
    assert client.fails("next_stream_chunk", "stream_token_invalid", {"stream_token": token})["context"] == {
        "reason": "closed"}


def test_an_empty_step_still_yields_one_explained_chunk(pair):
    client = pair[0]
    client.ok("enter_collection", collection_id=A)
    chunks, done = walk(client, client.ok("begin_result_stream", query="zzzunmatchedzzz")["stream_token"])
    assert [c["chunk_type"] for c in chunks] == STEPS
    assert all(c["stream_metadata"]["what_changed"].startswith("Added 0 ") for c in chunks)
    assert done["summary"]["total_references"] == 0


def test_an_expired_token_fails_as_expired(pair):
    client = pair[0]
    client.ok("enter_collection", collection_id=A)
    token = client.ok("begin_result_stream", query="kelp")["stream_token"]
    client.ok("next_stream_chunk", stream_token=token)
    time.sleep(1.7)
    for _ in range(2):
        error = client.fails("next_stream_chunk", "stream_token_expired", {"stream_token": token})
        assert error["recovery"] == "Call begin_result_stream to start a new stream"


def test_a_token_from_another_session_and_a_forged_one_are_invalid(pair):
    first, second = pair
    first.ok("enter_collection", collection_id=A)
    second.ok("enter_collection", collection_id=A)
    token = first.ok("begin_result_stream", query="kelp")["stream_token"]
    assert second.fails("next_stream_chunk", "stream_token_invalid", {"stream_token": token})["context"] == {
        "reason": "unknown"}
    for forged in (token[:-1] + ("A" if token[-1] != "A" else "B"), "", "0" * 43, "../" * 20):
        second.fails("next_stream_chunk", "stream_token_invalid", {"stream_token": forged})
    first.ok("next_stream_chunk", stream_token=token)  # the owner still can


def test_entering_a_collection_ends_the_streams_of_the_previous_one(pair):
    client = pair[0]
    client.ok("enter_collection", collection_id=A)
    token = client.ok("begin_result_stream", query="kelp")["stream_token"]
    client.ok("enter_collection", collection_id=B)
    assert client.fails("next_stream_chunk", "stream_token_invalid", {"stream_token": token})["context"] == {
        "reason": "closed"}


def test_stream_tokens_are_opaque_and_unguessable(pair):
    client = pair[0]
    client.ok("enter_collection", collection_id=A)
    tokens = [client.ok("begin_result_stream", query="kelp")["stream_token"] for _ in range(40)]
    assert len(set(tokens)) == len(tokens)
    for token in tokens:
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)  # 256 random bits, URL-safe base64
        assert A not in token and "kelp" not in token
    ordered = sorted(tokens)  # no shared prefixes, as a counter or a clock would leave
    assert max(len(os.path.commonprefix(pair)) for pair in zip(ordered, ordered[1:])) <= 4
    counts = Counter("".join(tokens))
    total = sum(counts.values())
    entropy = -sum(n / total * math.log2(n / total) for n in counts.values())
    assert entropy > 5.5  # close to log2(64) = 6 bits per character


def test_two_http_sessions_never_see_each_others_context_or_tokens(built, tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    argv = [sys.executable, "-m", "reference.open_notebook", "--notebooks", str(built.root), "--http",
            "--port", str(port)]
    owner = Client(HttpServer(url, argv, env=private_environment(tmp_path), cwd=tmp_path))
    other = Client(HttpServer(url))
    try:
        assert owner.conn.session_id and other.conn.session_id and owner.conn.session_id != other.conn.session_id
        owner.ok("enter_collection", collection_id=A)
        other.fails("semantic_search", "no_collection_context", {"query": "kelp"})
        other.ok("enter_collection", collection_id=B)
        assert owner.ok("semantic_search", query="kelp")["collection_id"] == A
        assert other.ok("semantic_search", query="kelp")["collection_id"] == B
        token = owner.ok("begin_result_stream", query="kelp")["stream_token"]
        other.fails("next_stream_chunk", "stream_token_invalid", {"stream_token": token})
        assert owner.ok("next_stream_chunk", stream_token=token)["chunk_index"] == 0
        again = Client(HttpServer(url))  # a new session after others: SAFE
        again.fails("list_artifact_sets", "no_collection_context")
        again.conn.close()
    finally:
        other.conn.close()
        owner.close()
