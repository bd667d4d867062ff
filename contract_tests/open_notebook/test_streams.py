"""Pull streams: the step order, what every chunk explains, the completion response, expiry,
pull-only delivery (integration); tokens that cannot be guessed, forged or carried to another
session, and a begin that discloses nothing (security)."""

from __future__ import annotations

import json
import secrets
import time

import pytest

from contract_tests.open_notebook.common import (
    STEP_ORDER,
    content_tokens,
    echoes,
    error_type,
    hits,
    padded,
    profiles_mark,
)
from contract_tests.open_notebook.conftest import pull
from contract_tests.synthetic.notebooks import ROLES
from contract_tests.verdicts.checks import called_ok, first_difference, short, structured_error
from contract_tests.verdicts.findings import Findings, describe_call, esc, one_case
from contract_tests.verdicts.running import own

pytestmark = [profiles_mark]
MIN_DIFFERING = 16  # characters two consecutive tokens must differ in (64 bits even in hex)


def _stream(main, notebooks, query: str | None = None, *, req: str | None = None):
    req = own(req)
    main.enter("active", req=req)
    query = query or notebooks.collection("active").passage("probe").exact_text
    begun = main.ok("begin_result_stream", {"query": query}, req=req)
    return query, begun, pull(main, str(begun.get("stream_token")), req=req)


@pytest.mark.integration
@pytest.mark.req("ON-STRM-004")
def test_chunks_follow_the_seeds_step_order_then_complete(main, notebooks):
    _query, _begun, responses = _stream(main, notebooks)
    chunks = [r for r in responses if r.get("chunk_type") != "stream_complete"]
    types = [c.get("chunk_type") for c in chunks]
    with Findings() as findings:
        findings.check(chunks, "the stream gave no chunk")
        findings.check(all(t in STEP_ORDER for t in types), f"chunk types outside the steps: {types}")
        ranks = [STEP_ORDER.index(t) for t in types if t in STEP_ORDER]
        findings.check(ranks == sorted(ranks), f"the chunks go back in the step order: {types}")
        findings.check(responses and responses[-1].get("chunk_type") == "stream_complete",
                       f"the stream did not end with the completion response (last: "
                       f"{short(responses[-1] if responses else None, 200)})")


@pytest.mark.integration
@pytest.mark.req("ON-STRM-013")
def test_chunk_index_rises_by_one(main, notebooks):
    """The profile's reading: the seed says only `chunk_index: number`."""
    _query, _begun, responses = _stream(main, notebooks)
    indexes = [c.get("chunk_index") for c in responses
               if isinstance(c, dict) and c.get("chunk_type") != "stream_complete"]
    with Findings() as findings:
        if not indexes:
            findings.block("the stream gave no chunk to check (see ON-STRM-004)", by="ON-STRM-004")
        rising = isinstance(indexes[0], int) and not isinstance(indexes[0], bool) and \
            indexes == list(range(indexes[0], indexes[0] + len(indexes))) if indexes else True
        findings.check(rising, f"chunk_index does not rise by one: {short(indexes, 200)}")


@pytest.mark.integration
@pytest.mark.req("ON-STRM-005")
def test_every_chunk_explains_what_changed_why_and_its_progress(main, notebooks):
    _query, _begun, responses = _stream(main, notebooks)
    with Findings() as findings:
        if not any(isinstance(c, dict) and c.get("chunk_type") != "stream_complete" for c in responses):
            findings.block("the stream gave no chunk to check (see ON-STRM-004)", by="ON-STRM-004")
        for chunk in responses:
            if chunk.get("chunk_type") == "stream_complete":
                continue
            case = f"chunk {chunk.get('chunk_index')}"
            meta = chunk.get("stream_metadata") or {}
            for key in ("what_changed", "why"):
                findings.check(isinstance(meta.get(key), str) and meta[key].strip(),
                               f"stream_metadata.{key} is empty or missing", case=case)
            progress = meta.get("progress") or {}
            current = progress.get("current_step")
            findings.check(current == chunk.get("chunk_type"),
                           f"progress.current_step {short(current)} is not the chunk's type", case=case)
            for key in ("completed_steps", "remaining_steps"):
                steps = progress.get(key)
                findings.check(isinstance(steps, list) and all(s in STEP_ORDER for s in steps) and current not in steps,
                               f"progress.{key} is {short(steps)}", case=case)
            continuation = chunk.get("continuation") or {}
            for key, kinds in (("has_more", bool), ("next_chunk_available", bool),
                               ("estimated_remaining", (int, float, type(None)))):
                findings.check(key in continuation and isinstance(continuation[key], kinds),
                               f"continuation.{key} is {short(continuation.get(key))}", case=case)


@pytest.mark.integration
@pytest.mark.req("ON-STRM-006")
def test_the_completion_response_closes_the_stream(main, notebooks):
    query = padded(notebooks.collection("active").passage("probe").exact_text)
    _query, _begun, responses = _stream(main, notebooks, query)
    last = responses[-1] if responses else {}
    with Findings() as findings:
        if not findings.check(last.get("chunk_type") == "stream_complete",
                              f"no stream_complete response (last: {short(last, 200)})"):
            return
        summary, continuation = last.get("summary") or {}, last.get("continuation") or {}
        for key in ("total_chunks", "total_references"):
            findings.check(isinstance(summary.get(key), (int, float)), f"summary.{key} is "
                           f"{short(summary.get(key))}")
        findings.check(echoes(summary.get("query"), query),
                       f"summary.query {short(summary.get('query'))} is not the stream's query")
        findings.check(continuation.get("has_more") is False, "continuation.has_more is not false")
        findings.check(continuation.get("stream_closed") is True, "continuation.stream_closed is not true")


# What may differ between two streams of one query: the token, times and timing.
STREAM_VOLATILE = ("stream_token", "created_at", "timestamp", "last_verified", "search_time_ms", "expires_at")


def _stable(value):
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in STREAM_VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


@pytest.mark.integration
@pytest.mark.req("ON-STRM-011")
def test_the_same_query_streams_the_same_chunks(main, notebooks):
    """Two streams of one query in one collection state give the same chunks in the same order
    (tokens, times and timings aside)."""
    query, _begun, first = _stream(main, notebooks)
    _query, _begun, second = _stream(main, notebooks, query)
    with Findings() as findings:
        if not any(isinstance(c, dict) and c.get("chunk_type") != "stream_complete" for c in first):
            findings.block("the stream gave no chunk to compare (see ON-STRM-004)", by="ON-STRM-004")
        findings.check(len(first) == len(second), f"{len(first)} then {len(second)} responses")
        for n, (a, b) in enumerate(zip(first, second)):
            if _stable(a) != _stable(b):
                findings.fail(f"response {n} differs: {first_difference(_stable(a), _stable(b))}")
                break


@pytest.mark.integration
@pytest.mark.req("ON-STRM-012")
def test_progress_and_the_summary_count_what_was_served(main, notebooks):
    """completed_steps are the step order's steps before the current one, remaining_steps those
    after it, each in the step order; summary.total_chunks is the number of chunks served."""
    _query, _begun, responses = _stream(main, notebooks)
    chunks = [c for c in responses if isinstance(c, dict) and c.get("chunk_type") != "stream_complete"]
    with Findings() as findings:
        if not chunks:
            findings.block("the stream gave no chunk to check (see ON-STRM-004)", by="ON-STRM-004")
        for chunk in chunks:
            progress = (chunk.get("stream_metadata") or {}).get("progress") or {}
            current, case = progress.get("current_step"), f"chunk {chunk.get('chunk_index')}"
            if current not in STEP_ORDER:
                continue  # ON-STRM-005's finding
            rank = STEP_ORDER.index(current)
            done, left = progress.get("completed_steps"), progress.get("remaining_steps")
            findings.check(isinstance(done, list) and done == [s for s in STEP_ORDER[:rank] if s in done],
                           f"completed_steps {short(done)} are not steps before {current} in order",
                           case=case)
            findings.check(isinstance(left, list) and left == [s for s in STEP_ORDER[rank + 1:] if s in left],
                           f"remaining_steps {short(left)} are not steps after {current} in order",
                           case=case)
        last = responses[-1] if responses and isinstance(responses[-1], dict) else {}
        if last.get("chunk_type") == "stream_complete":
            total = (last.get("summary") or {}).get("total_chunks")
            findings.check(total == len(chunks), f"summary.total_chunks is {short(total)} after "
                           f"{len(chunks)} chunks", case="total_chunks")


@pytest.mark.integration
@pytest.mark.req("ON-STRM-009")
def test_an_expired_token_fails_with_stream_token_expired(suite, new_session, profile, main):
    """With {stream_timeout_s} in the command the suite starts a server whose streams expire
    after one second; otherwise it waits the timeout the server reports, if that is short."""
    timeout = int(profile.limits["expiry_timeout_s"])
    if "{stream_timeout_s}" in suite.command:
        session = new_session(extra={"stream_timeout_s": str(timeout)})
    else:
        session = main
    session.enter("active")
    args = {"query": session.fixture.collection("active").passage("probe").exact_text}
    begun = session.ok("begin_result_stream", args)
    reported = (begun.get("disclosure_policy") or {}).get("timeout_s")
    wait = reported if isinstance(reported, (int, float)) else timeout
    if wait > profile.limits["expiry_wait_max_s"]:
        pytest.skip(f"the server's streams live {wait} s and its command takes no {{stream_timeout_s}}")
    time.sleep(wait + 0.6)
    token = str(begun.get("stream_token"))
    document = session.error("next_stream_chunk", {"stream_token": token}, "an expired token")
    with Findings() as findings:
        findings.check(error_type(document) == "stream_token_expired",
                       f"the error type is {short(error_type(document))}")


@pytest.mark.integration
@pytest.mark.req("ON-STRM-010")
def test_nothing_is_pushed_after_a_stream_begins(main, server, notebooks):
    main.enter("active")
    mark = server.transcript.mark()
    begun = main.ok("begin_result_stream", {"query": notebooks.collection("active").passage("probe").exact_text})
    time.sleep(0.5)
    out, _err = server.transcript.since(mark)
    token = str(begun.get("stream_token"))
    pushed = []
    for line in out:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and "method" in message and (token in line or "chunk_type" in line):
            pushed.append(message.get("method"))
    with Findings() as findings:
        findings.check(not pushed, f"the server pushed stream messages: {pushed[:3]}")


@pytest.mark.security
@pytest.mark.req("ON-STRM-002")
def test_stream_tokens_cannot_be_guessed(main, notebooks, profile):
    main.enter("active")
    query = notebooks.collection("active").passage("probe").exact_text
    tokens = [str(main.ok("begin_result_stream", {"query": query}).get("stream_token"))
              for _ in range(int(profile.limits["token_samples"]))]
    with Findings() as findings:
        findings.check(len(set(tokens)) == len(tokens), "a token was issued twice")
        for token in tokens:
            findings.check(len(token) >= 16, f"a {len(token)}-character token: {esc(token)}")
            for secret in (query, ROLES["active"]):
                findings.check(secret not in token, "a token carries the query or the collection id")
        for a, b in zip(tokens, tokens[1:]):
            # Aligned at the start and at the end (a fixed prefix or suffix, e.g. a signed
            # token's header, is fine): a counter or a timestamp changes a few characters only.
            differing = max(sum(x != y for x, y in zip(a, b)), sum(x != y for x, y in zip(a[::-1], b[::-1])))
            findings.check(differing >= MIN_DIFFERING,
                           f"two consecutive tokens differ in {differing} characters: {esc(a)} {esc(b)}")


@pytest.mark.unit
@pytest.mark.req("ON-STRM-014")
def test_begin_result_stream_names_the_query_sent(main, notebooks):
    main.enter("active")
    args = {"query": padded(notebooks.collection("active").passage("probe").exact_text)}
    body = main.ok("begin_result_stream", args)
    with Findings() as findings:
        findings.check(echoes(body.get("query"), args["query"]),
                       f"query {short(body.get('query'))} is not the query sent",
                       request=describe_call("begin_result_stream", args))


@pytest.mark.security
@pytest.mark.req("ON-STRM-003")
def test_begin_result_stream_discloses_no_content(main, notebooks):
    passage = notebooks.collection("active").passage("multiline")
    query = passage.exact_text[: len(passage.exact_text) // 2]
    main.enter("active")
    body = main.ok("begin_result_stream", {"query": query})
    found = hits(body, content_tokens(notebooks), echoed=(query,))
    with Findings() as findings:
        findings.check(not found, f"begin_result_stream returned content: {found}",
                       request=describe_call("begin_result_stream", {"query": query}))


@pytest.mark.security
@pytest.mark.req("ON-STRM-007")
def test_a_token_from_another_session_is_invalid(main, new_session, notebooks):
    other = new_session()
    other.enter("active")
    main.enter("active")
    begun = main.ok("begin_result_stream", {"query": notebooks.collection("active").passage("probe").exact_text})
    token = str(begun.get("stream_token"))
    response, request = other.raw("next_stream_chunk", {"stream_token": token})
    with Findings() as findings:
        if not findings.check(not called_ok(response), "another session's token gave a chunk",
                              request=request):
            return
        document = structured_error(response, other.profile, "another session's token", request=request)
        findings.check(error_type(document) == "stream_token_invalid",
                       f"the error type is {short(error_type(document))}", request=request)


@pytest.mark.security
@pytest.mark.req("ON-STRM-008")
def test_a_forged_token_is_invalid(main, notebooks):
    main.enter("active")
    begun = main.ok("begin_result_stream", {"query": notebooks.collection("active").passage("probe").exact_text})
    token = str(begun.get("stream_token"))
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    with Findings() as findings:
        for case, forged in (("never-issued", secrets.token_urlsafe(32)), ("one-character-changed", flipped),
                             ("uuid-shaped", "00000000-0000-4000-8000-000000000000")):
            response, request = main.raw("next_stream_chunk", {"stream_token": forged})
            if not findings.check(not called_ok(response), "a forged token gave a chunk", case=case,
                                  request=request):
                continue
            with one_case(findings, case, request):
                document = structured_error(response, main.profile, "a forged token", request=request,
                                            case=case)
                findings.check(error_type(document) == "stream_token_invalid",
                               f"the error type is {short(error_type(document))}", case=case, request=request)
