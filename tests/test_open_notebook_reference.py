"""The open-notebook reference server (seed 004) over stdio, on collections the generator
builds: the surface, the Domicile invariants, retrieval, artifacts, provenance, refusals,
errors, logs and the absence of writes and network. Streams and HTTP sessions are in
test_open_notebook_streams.py."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from contract_tests.synthetic import notebook_generator as fixture
from contract_tests.transport.process import private_environment
from contract_tests.transport.stdio import StdioServer
from contract_tests.transport.system import inet_sockets, needs_proc

SEED_TOOLS = ["describe_world", "list_collections", "enter_collection", "list_artifact_sets", "semantic_search",
              "fetch_passage", "retrieve_artifact", "begin_result_stream", "next_stream_chunk",
              "explain_provenance", "list_constraints"]
COLLECTION_SCOPED = {"list_artifact_sets": {}, "semantic_search": {"query": "kelp"},
                     "fetch_passage": {"source_id": "coastal-survey:nb-0001:1:1"},
                     "retrieve_artifact": {"artifact_id": "coastal-survey:catalogue:catalogue"},
                     "begin_result_stream": {"query": "kelp"},
                     "explain_provenance": {"id": "coastal-survey:nb-0001:1:1", "id_type": "source"}}
ERROR_TYPES = {"no_collection_context", "collection_not_found", "source_not_found", "artifact_not_found",
               "stream_token_invalid", "stream_token_expired", "operation_forbidden", "ambiguous_request",
               "upstream_failure", "source_outside_collection"}
PASSAGE_DISCLAIMER = ("This is a quoted passage from human-authored material. "
                      "It is provided as-is with no interpretation.")
ARTIFACT_DISCLAIMER = ("This artifact is derived material. It is offered for inspection only and carries no "
                       "authority. Verify against source notebooks for authoritative content.")
A, B = "coastal-survey", "orchard-journal"


# -- driving a server ----------------------------------------------------------------------------
@dataclass
class Reply:
    result: dict[str, Any]
    body: dict[str, Any]

    @property
    def is_error(self) -> bool:
        return self.result.get("isError") is True


class Client:
    """One MCP session spoken to in raw JSON-RPC (a stdio process, or an HTTP session)."""

    def __init__(self, connection) -> None:
        self.conn = connection
        self.init = connection.initialize()

    @classmethod
    def stdio(cls, root: Path, home: Path, *flags: str) -> Client:
        argv = [sys.executable, "-m", "reference.open_notebook", "--notebooks", str(root), *flags]
        return cls(StdioServer(argv, env=private_environment(home), cwd=home))

    def call(self, name: str, arguments: Any = None) -> Reply:
        response = self.conn.call_tool(name, {} if arguments is None else arguments)
        assert "result" in response, response
        content = response["result"]["content"]
        assert len(content) == 1 and content[0]["type"] == "text"
        return Reply(response["result"], json.loads(content[0]["text"]))

    def ok(self, name: str, **arguments: Any) -> dict[str, Any]:
        reply = self.call(name, arguments)
        assert not reply.is_error, reply.body
        assert reply.result["structuredContent"] == reply.body
        return reply.body

    def fails(self, name: str, error_type: str, arguments: Any = None) -> dict[str, Any]:
        reply = self.call(name, arguments)
        assert reply.is_error, reply.body
        assert list(reply.body) == ["error"] and reply.body["error"]["type"] == error_type, reply.body
        error = reply.body["error"]
        assert isinstance(error["message"], str) and error["message"]
        assert set(error) <= {"type", "message", "recovery", "context", "source_id"}
        return error

    def close(self) -> None:
        self.conn.close()


def snapshot(*roots: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p): (p.read_bytes() if p.is_file() else b"", p.stat().st_mtime_ns)
            for root in roots for p in sorted([root, *root.rglob("*")])}


def front_matter(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("\n---\n", 1)[0][4:])


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> fixture.GeneratedRoot:
    """One generated root shared by the module; it must be unchanged when the module ends."""
    built = fixture.build(tmp_path_factory.mktemp("on-ref") / "root", seed=11)
    before = snapshot(built.root)
    yield built
    assert snapshot(built.root) == before


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("on-home")


@pytest.fixture(scope="module")
def server(built, home):
    client = Client.stdio(built.root, home)
    yield client
    client.close()


@pytest.fixture
def fresh(built, tmp_path):
    """Servers started for one test; closed at its end."""
    started: list[Client] = []

    def start(*flags: str, root: Path | None = None) -> Client:
        started.append(Client.stdio(root or built.root, tmp_path, *flags))
        return started[-1]

    yield start
    for client in started:
        client.close()


# -- surface -------------------------------------------------------------------------------------
def test_tools_list_is_exactly_the_eleven_seed_tools_with_their_input_schemas(server):
    tools = server.conn.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == SEED_TOOLS
    schemas = {t["name"]: t["inputSchema"] for t in tools}
    empty = {"type": "object", "properties": {}, "required": []}
    for name in ("describe_world", "list_collections", "list_artifact_sets", "list_constraints"):
        assert schemas[name] == empty
    assert schemas["semantic_search"] == {"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string", "description": "Natural language query"},
        "k": {"type": "number", "description": "Maximum results (default 10, max 50)", "default": 10}}}
    assert schemas["explain_provenance"]["properties"]["id_type"]["enum"] == ["source", "artifact"]
    assert schemas["explain_provenance"]["required"] == ["id", "id_type"]
    for name, field in [("enter_collection", "collection_id"), ("fetch_passage", "source_id"),
                        ("retrieve_artifact", "artifact_id"), ("begin_result_stream", "query"),
                        ("next_stream_chunk", "stream_token")]:
        assert schemas[name]["required"] == [field] and schemas[name]["properties"][field]["type"] == "string"


def test_every_tool_declares_read_only_and_reversible_in_meta_and_annotations(server):
    for tool in server.conn.request("tools/list")["result"]["tools"]:
        assert tool["_meta"] == {"reversible": True, "authority_level": "none", "mutation": False}
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["annotations"]["destructiveHint"] is False


def test_the_server_offers_tools_only(server):
    assert server.init["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert server.init["result"]["serverInfo"]["name"] == "open-notebook"
    for method in ("resources/list", "prompts/list", "resources/templates/list"):
        assert server.conn.request(method)["error"]["code"] == -32601


def test_every_result_success_or_error_says_provenance_is_available(server):
    for name, arguments in [("describe_world", {}), ("semantic_search", {"query": "x", "k": 0}), ("nope", {})]:
        assert server.call(name, arguments).result["_meta"] == {"provenance_available": True,
                                                               "constraints_checkable": True}


def test_describe_world_enumerates_the_tools_and_every_prohibition(server):
    world = server.ok("describe_world")
    assert world["world"] == {"name": "Open Notebook", "type": "read-only knowledge jurisdiction",
                              "authority_level": "none", "mutation": "forbidden",
                              "persistence": "external only (artifacts, vectors)"}
    assert world["available_affordances"] == SEED_TOOLS
    assert world["boundaries"]["reasoning"] == world["boundaries"]["learning"] == "forbidden"
    assert world["citation_requirements"] == {"passages_must_quote": True, "artifacts_must_disclaim": True,
                                              "synthesis_must_label": True}
    assert world["provenance_available"] is True
    assert world["prohibitions"] == server.ok("list_constraints")["mutation_prohibitions"]


def test_list_constraints_is_the_seeds_list_and_the_configured_limits(server):
    constraints = server.ok("list_constraints")
    assert constraints["mutation_prohibitions"] == [
        "writing notebooks", "editing notebooks", "deleting notebooks", "modifying vectors", "modifying embeddings",
        "generating new knowledge", "applying reasoning outcomes", "persisting memory", "triggering workflows",
        "scheduling tasks", "calling external tools", "expanding affordances dynamically"]
    assert constraints["refusal_conditions"] == [
        "requests for mutation", "requests for reasoning", "requests for decision-making",
        "requests for external tool invocation", "requests for memory persistence",
        "ambiguous requests (when scope reduction insufficient)"]
    assert constraints["citation_requirements"]["passages"] == "must quote verbatim"
    assert constraints["interpretation_rule"]["when_in_doubt"] == ["do not answer", "explain why"]
    assert constraints["available_affordances"] == SEED_TOOLS
    assert constraints["limits"] == {"max_passage_context": 500, "max_search_results": 50,
                                     "default_search_results": 10, "preview_snippet_max_chars": 100,
                                     "stream_timeout_s": 300.0, "stream_chunk_size": 10}


# -- Domicile invariants ---------------------------------------------------------------------------
def test_a_new_session_has_no_collection_and_every_scoped_tool_says_so(fresh):
    client = fresh()
    for name, arguments in COLLECTION_SCOPED.items():
        error = client.fails(name, "no_collection_context", arguments)
        assert error["message"] == "No active collection. Invoke enter_collection first."
        assert error["recovery"] == "Call list_collections, then enter_collection"
    client.fails("next_stream_chunk", "stream_token_invalid", {"stream_token": "x" * 43})
    assert [c["collection_id"] for c in client.ok("list_collections")["collections"]] == [A, B, "workshop-logs"]


def test_list_collections_gives_metadata_and_counts_but_no_content(server, built):
    listed = server.ok("list_collections")
    assert listed["metadata"]["total_collections"] == 3 and listed["metadata"]["next_refresh"] is None
    for entry in listed["collections"]:
        info = built.collections[entry["collection_id"]]
        meta = json.loads((built.root / info.path / "collection.json").read_text())
        assert entry == {"collection_id": info.collection_id, "title": meta["title"], "date_range": meta["date_range"],
                         "domain_tags": meta["domain_tags"], "artifact_count": len(info.artifacts),
                         "notebook_count": len(info.notebook_ids), "last_modified": meta["last_modified"]}
    assert not any(token in json.dumps(listed) for token in built.canaries())


def test_enter_collection_replaces_the_context_and_preloads_nothing(server, built):
    entered = server.ok("enter_collection", collection_id=A)
    assert entered == {
        "collection_id": A, "title": built.collections[A].title, "context_established": True,
        "scope_note": "All subsequent operations restricted to this collection until exit or new enter_collection call",
        "available_operations": ["list_artifact_sets", "semantic_search", "fetch_passage", "retrieve_artifact",
                                 "begin_result_stream"],
        "preload_note": "No data preloaded. Invoke retrieval tools explicitly."}
    a_source = built.collections[A].passage("probe").source_id
    server.ok("fetch_passage", source_id=a_source)
    server.ok("enter_collection", collection_id=B)
    assert server.fails("fetch_passage", "source_outside_collection", {"source_id": a_source})["source_id"] == a_source
    results = server.ok("semantic_search", query=built.collections[A].passage("probe").query, k=50)["results"]
    assert all(r["reference_id"].startswith(f"{B}:") for r in results)
    error = server.fails("enter_collection", "collection_not_found", {"collection_id": "no-such-collection"})
    assert error["context"] == {"active_collection": B}


def test_two_stdio_processes_never_share_a_context(fresh):
    first, second = fresh(), fresh()
    first.ok("enter_collection", collection_id=A)
    second.fails("semantic_search", "no_collection_context", {"query": "kelp"})
    second.ok("enter_collection", collection_id=B)
    assert first.ok("semantic_search", query="kelp")["collection_id"] == A


def test_a_restart_is_safe(fresh):
    first = fresh()
    first.ok("enter_collection", collection_id=A)
    first.close()
    fresh().fails("list_artifact_sets", "no_collection_context")


def test_a_whole_run_writes_nothing_to_the_root_home_or_temp(built, tmp_path):
    home = tmp_path / "private"
    env = private_environment(home)
    watched = [built.root, *(Path(env[k]) for k in ("HOME", "TMPDIR", "XDG_CACHE_HOME", "XDG_STATE_HOME"))]
    before = snapshot(*watched)
    client = Client(StdioServer([sys.executable, "-m", "reference.open_notebook", "--notebooks", str(built.root)],
                                env=env, cwd=home))
    try:
        _exercise_every_tool(client, built)
    finally:
        client.close()
    assert snapshot(*watched) == before


def _exercise_every_tool(client: Client, built: fixture.GeneratedRoot) -> None:
    client.ok("describe_world")
    client.ok("list_constraints")
    client.ok("list_collections")
    client.ok("enter_collection", collection_id=A)
    client.ok("list_artifact_sets")
    probe = built.collections[A].passage("probe")
    client.ok("semantic_search", query=probe.query)
    client.ok("fetch_passage", source_id=probe.source_id)
    client.ok("retrieve_artifact", artifact_id=built.collections[A].artifacts[0].artifact_id)
    client.ok("explain_provenance", id=probe.source_id, id_type="source")
    token = client.ok("begin_result_stream", query=probe.query)["stream_token"]
    while client.ok("next_stream_chunk", stream_token=token)["chunk_type"] != "stream_complete":
        pass
    client.fails("write_notebook", "operation_forbidden", {"notebook_id": "nb-0001", "text": "x"})


# -- semantic_search -----------------------------------------------------------------------------------
def _ranking(body: dict[str, Any]) -> list[tuple]:
    return [(r["reference_id"], r["relevance_score"], r["preview_snippet"]) for r in body["results"]]


def test_search_is_deterministic_for_the_same_collection_and_query(server, built, fresh):
    server.ok("enter_collection", collection_id=A)
    other = fresh()
    other.ok("enter_collection", collection_id=A)
    for query in ("kelp tide pool", built.collections[A].passage("multiline").query, "the of and"):
        runs = [server.ok("semantic_search", query=query, k=50) for _ in range(3)]
        runs.append(other.ok("semantic_search", query=query, k=50))
        assert all(_ranking(r) == _ranking(runs[0]) for r in runs)
        assert all({**r["metadata"], "search_time_ms": 0} == {**runs[0]["metadata"], "search_time_ms": 0} for r in runs)


def test_search_finds_each_probe_first_with_a_pointer_and_the_note(server, built):
    server.ok("enter_collection", collection_id=A)
    for passage in built.collections[A].passages:
        body = server.ok("semantic_search", query=passage.query)
        assert body["collection_id"] == A and body["query"] == passage.query
        assert body["note"] == "Full text not included. Use fetch_passage to retrieve content."
        top = body["results"][0]
        assert top["reference_id"] == passage.source_id, passage.kind
        assert top["source_pointer"]["notebook_id"] == passage.notebook_id
        assert top["source_pointer"]["page"] == passage.page
        scores = [r["relevance_score"] for r in body["results"]]
        assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)


def test_k_defaults_to_10_and_over_50_is_clamped_not_refused(server):
    server.ok("enter_collection", collection_id=A)
    default = server.ok("semantic_search", query="the of and a with")
    assert default["metadata"]["returned"] == len(default["results"]) == 10
    assert default["metadata"]["k_applied"] == 10 and default["metadata"]["total_matches"] > 10
    clamped = server.ok("semantic_search", query="the of and a with", k=500)
    assert clamped["metadata"]["k_applied"] == 50
    assert len(clamped["results"]) == min(50, clamped["metadata"]["total_matches"])
    assert len(server.ok("semantic_search", query="the of and a with", k=3.0)["results"]) == 3
    for bad in (0, -1, 2.5, True, "5"):
        server.fails("semantic_search", "ambiguous_request", {"query": "kelp", "k": bad})


def test_previews_are_at_most_100_characters_and_never_the_full_text(server, built):
    server.ok("enter_collection", collection_id=A)
    for query in ("the of and a with", "kelp", built.collections[A].passage("unicode").query):
        for result in server.ok("semantic_search", query=query, k=50)["results"]:
            snippet = result["preview_snippet"]
            text = server.ok("fetch_passage", source_id=result["reference_id"])["passage"]["exact_text"]
            assert len(snippet) <= 100 and snippet != text
            assert snippet.endswith("\u2026") and text.startswith(snippet[:-1])


def test_content_of_a_non_active_collection_never_appears(server, built):
    """From A, search the other collections' own passages (canaries cut out) and their canary
    tokens, fetch every hit: no output but the echoed `query` ever holds their canaries."""
    server.ok("enter_collection", collection_id=A)
    mark = server.conn.transcript.mark()
    for cid, info in built.collections.items():
        if cid == A:
            continue
        for passage in info.passages:
            query = passage.exact_text
            for token in info.canaries.values():
                query = query.replace(token, " ")
            for result in server.ok("semantic_search", query=query, k=50)["results"]:
                assert result["reference_id"].startswith(f"{A}:")
                server.ok("fetch_passage", source_id=result["reference_id"])
        for token in info.canaries.values():
            body = server.ok("semantic_search", query=token, k=50)
            assert all(r["reference_id"].startswith(f"{A}:") for r in body["results"])
    protocol, logs = server.conn.transcript.since(mark)
    others = [token for cid in built.collections if cid != A for token in built.canaries(cid)]
    for line in protocol:
        result = json.loads(line)["result"]
        body = json.loads(result["content"][0]["text"])
        body.pop("query", None)  # the seed's shape echoes the query the client sent
        assert not any(token in json.dumps(body, ensure_ascii=False) for token in others)
    assert not any(token in line for token in others for line in logs)


# -- fetch_passage ---------------------------------------------------------------------------------------
def test_fetch_passage_returns_the_exact_text_with_bounded_verbatim_context(server, built):
    server.ok("enter_collection", collection_id=A)
    for passage in built.collections[A].passages:
        body = server.ok("fetch_passage", source_id=passage.source_id)
        got = body["passage"]
        assert got["exact_text"] == passage.exact_text
        assert len(got["context_before"]) <= 500 and len(got["context_after"]) <= 500
        notebook = (built.root / passage.notebook_path).read_text(encoding="utf-8")
        assert got["context_before"] + got["exact_text"] + got["context_after"] in notebook
        assert "<!-- page" not in got["context_before"] + got["context_after"]  # context stays on its page
        assert body["disclaimer"] == PASSAGE_DISCLAIMER
        if passage.kind == "long_context":
            assert len(got["context_before"]) == len(got["context_after"]) == 500


def test_the_integrity_checksum_is_the_sha256_of_the_exact_text(server, built):
    server.ok("enter_collection", collection_id=A)
    for passage in built.collections[A].passages:
        integrity = server.ok("fetch_passage", source_id=passage.source_id)["integrity"]
        assert integrity["checksum"] == hashlib.sha256(passage.exact_text.encode("utf-8")).hexdigest()
        assert integrity["verified"] is True and integrity["algorithm"] == "sha256"


def test_fetch_passage_provenance_names_the_notebook_page_and_export(server, built):
    server.ok("enter_collection", collection_id=A)
    for passage in built.collections[A].passages:
        provenance = server.ok("fetch_passage", source_id=passage.source_id)["provenance"]
        front = front_matter(built.root / passage.notebook_path)
        assert provenance["notebook_id"] == passage.notebook_id and provenance["notebook_title"] == front["title"]
        assert provenance["page"] == passage.page
        assert provenance["timestamp"] == front["pages"][passage.page - 1]["timestamp"]
        assert provenance["export_method"] == front["export_method"]
        assert isinstance(provenance["last_verified"], int)


def test_unknown_outside_and_malformed_sources_fail_with_their_types(server, built):
    server.ok("enter_collection", collection_id=A)
    outside = built.collections[B].passage("canary").source_id
    assert server.fails("fetch_passage", "source_outside_collection", {"source_id": outside})["source_id"] == outside
    for unknown in (f"{A}:nb-0001:1:999", f"{A}:nb-9999:1:1", "no-such:nb-0001:1:1"):
        assert server.fails("fetch_passage", "source_not_found", {"source_id": unknown})["source_id"] == unknown
    malformed = server.fails("fetch_passage", "source_not_found", {"source_id": "/etc/passwd"})
    assert "source_id" not in malformed and "/etc/passwd" not in json.dumps(malformed)
    server.fails("explain_provenance", "source_outside_collection", {"id": outside, "id_type": "source"})
    server.fails("explain_provenance", "artifact_not_found", {"id": outside, "id_type": "artifact"})


def test_a_notebook_edited_after_start_up_is_never_served_as_verified(fresh, tmp_path):
    built = fixture.build(tmp_path / "edit-root", seed=5, collections=1)
    client = fresh(root=built.root)
    client.ok("enter_collection", collection_id=A)
    probe = built.collections[A].passage("probe")
    path = built.root / probe.notebook_path
    path.write_text(path.read_text(encoding="utf-8").replace(probe.exact_text, "Edited words here."), encoding="utf-8")
    body = client.ok("fetch_passage", source_id=probe.source_id)
    assert body["passage"]["exact_text"] == "Edited words here."
    assert body["integrity"]["verified"] is False
    assert body["integrity"]["checksum"] != hashlib.sha256(b"Edited words here.").hexdigest()


# -- artifacts and provenance -------------------------------------------------------------------------------
def test_artifact_sets_list_status_type_and_ids_but_no_contents(server, built):
    server.ok("enter_collection", collection_id=A)
    listed = server.ok("list_artifact_sets")
    assert listed["collection_id"] == A
    info = built.collections[A]
    assert [s["artifact_set_id"] for s in listed["artifact_sets"]] == sorted(info.artifact_set_ids)
    for entry in listed["artifact_sets"]:
        mine = [a for a in info.artifacts if a.artifact_set_id == entry["artifact_set_id"]]
        assert entry["status"] == mine[0].status and entry["artifact_type"] == mine[0].artifact_type
        assert entry["artifact_ids"] == [a.artifact_id for a in mine] and entry["artifact_count"] == len(mine)
        assert set(entry) == {"artifact_set_id", "artifact_type", "created_at", "status", "source_notebooks",
                              "artifact_count", "artifact_ids"}
    assert info.canaries["artifact"] not in json.dumps(listed)


def test_retrieve_artifact_labels_synthesis_disclaims_and_is_immutable(server, built):
    server.ok("enter_collection", collection_id=A)
    for artifact in built.collections[A].artifacts:
        body = server.ok("retrieve_artifact", artifact_id=artifact.artifact_id)
        assert body["status"] == artifact.status and body["artifact_type"] == artifact.artifact_type
        assert body["synthesis_metadata"]["synthesized"] is artifact.synthesized
        assert body["provenance"]["created_by"] == ("synthesis_pipeline" if artifact.synthesized else "human_export")
        assert body["disclaimer"] == ARTIFACT_DISCLAIMER and body["immutable"] is True
        data = (built.root / artifact.contents_path).read_bytes()
        expected = data.decode("utf-8") if artifact.media_type == "text/markdown" else json.loads(data)
        assert body["contents"] == expected
        assert body["integrity"]["checksum"] == hashlib.sha256(data).hexdigest() == artifact.sha256
        assert body["integrity"]["verified"] is True


def test_an_artifact_of_another_collection_or_unknown_is_not_found(server, built):
    server.ok("enter_collection", collection_id=A)
    for artifact_id in (built.collections[B].artifacts[0].artifact_id, f"{A}:summaries:nope", "../../etc"):
        error = server.fails("retrieve_artifact", "artifact_not_found", {"artifact_id": artifact_id})
        assert artifact_id not in json.dumps(error)


def test_an_artifact_tampered_after_start_up_is_never_served(fresh, tmp_path):
    built = fixture.build(tmp_path / "tamper-root", seed=6, collections=1)
    client = fresh(root=built.root)
    client.ok("enter_collection", collection_id=A)
    target = built.collections[A].artifacts[1]
    client.ok("retrieve_artifact", artifact_id=target.artifact_id)
    path = built.root / target.contents_path
    path.write_bytes(path.read_bytes() + b"Forged line.\n")
    error = client.fails("retrieve_artifact", "upstream_failure", {"artifact_id": target.artifact_id})
    assert error["context"] == {"verified": False, "reason": "checksum_mismatch"}
    path.unlink()
    client.fails("retrieve_artifact", "upstream_failure", {"artifact_id": target.artifact_id})
    # A manifest rewritten to vouch for forged bytes is not believed: the start-up checksum decides.
    other = built.collections[A].artifacts[2]
    forged = b"# Forged summary\n"
    (built.root / other.contents_path).write_bytes(forged)
    manifest = path.parent / "set.json"
    manifest.write_text(manifest.read_text().replace(other.sha256, hashlib.sha256(forged).hexdigest()))
    client.fails("retrieve_artifact", "upstream_failure", {"artifact_id": other.artifact_id})


def test_explain_provenance_describes_the_stored_chain_only(server, built):
    server.ok("enter_collection", collection_id=A)
    interpretation = "This provenance chain is descriptive only. No new interpretation has been added."
    for artifact in built.collections[A].artifacts:
        manifest = json.loads((built.root / Path(artifact.contents_path).parent / "set.json").read_text())
        entry = next(a for a in manifest["artifacts"] if a["artifact_id"] == artifact.local_id)
        body = server.ok("explain_provenance", id=artifact.artifact_id, id_type="artifact")
        assert body["interpretation_note"] == interpretation and body["id_type"] == "artifact"
        chain = body["provenance"]
        assert chain["transformation_steps"] == entry["provenance"]["transformation_steps"]
        assert chain["tools_involved"] == list(dict.fromkeys(s["tool"] for s in entry["provenance"]["transformation_steps"]))
        assert chain["confidence_notes"] == [entry["synthesis_metadata"]["confidence_note"]]
        assert chain["origin_notebook"]["notebook_id"] == entry["provenance"]["source_notebooks"][0]
    probe = built.collections[A].passage("probe")
    body = server.ok("explain_provenance", id=probe.source_id, id_type="source")
    front = front_matter(built.root / probe.notebook_path)
    assert body["provenance"]["origin_notebook"] == {"notebook_id": probe.notebook_id, "title": front["title"],
                                                     "author": front["author"], "created_at": front["created_at"]}
    assert body["provenance"]["transformation_steps"][0]["tool"] == front["export_method"]
    assert body["interpretation_note"] == interpretation


# -- refusals, errors, logs, network ----------------------------------------------------------------------
@pytest.mark.parametrize("name,arguments", [
    ("write_notebook", {"notebook_id": "nb-0001", "text": "new"}), ("delete_notebook", {"notebook_id": "nb-0001"}),
    ("update_embeddings", {}), ("save_memory", {"note": "remember"}), ("summarize_collection", {}),
    ("exit_collection", {}),
    ("fetch_passage", {"source_id": "coastal-survey:nb-0001:1:1", "replace_with": "new"}),
    ("semantic_search", {"query": "kelp", "mode": "write"}),
    ("semantic_search", {"query": "kelp", "reasoning": True}),
    ("retrieve_artifact", {"artifact_id": "coastal-survey:catalogue:catalogue", "persist": True}),
])
def test_mutation_and_reasoning_attempts_are_refused_explicitly(server, name, arguments):
    server.ok("enter_collection", collection_id=A)
    error = server.fails(name, "operation_forbidden", arguments)
    assert error["message"].endswith("is forbidden in Open Notebook world")
    assert error["recovery"] == "This world is read-only. Use external tools for mutation."


def test_an_undeclared_harmless_argument_is_an_ambiguous_request_not_ignored(server):
    server.ok("enter_collection", collection_id=A)
    error = server.fails("semantic_search", "ambiguous_request", {"query": "kelp", "colour": "blue"})
    assert "colour" not in json.dumps(error) and "blue" not in json.dumps(error)


def test_errors_use_the_seed_envelope_on_the_is_error_channel(server, built):
    server.ok("enter_collection", collection_id=A)
    cases = [("enter_collection", {"collection_id": "x"}), ("fetch_passage", {"source_id": "x"}),
             ("retrieve_artifact", {"artifact_id": "x"}), ("next_stream_chunk", {"stream_token": "x"}),
             ("semantic_search", {"query": ""}), ("nope", {})]
    for name, arguments in cases:
        reply = server.call(name, arguments)
        assert reply.is_error and "structuredContent" not in reply.result
        assert reply.body["error"]["type"] in ERROR_TYPES


def test_logs_go_to_stderr_one_line_per_call_without_text_ids_or_paths(built, fresh):
    client = fresh()
    mark = client.conn.transcript.mark()
    _exercise_every_tool(client, built)
    client.close()
    protocol, logs = client.conn.transcript.since(mark)
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in protocol)
    calls = [line for line in logs if line.startswith("tool=")]
    assert len(calls) >= 14 and all(" elapsed_ms=" in line for line in calls)
    text = "\n".join(client.conn.transcript.stderr)
    assert str(built.root) not in text and "coastal-survey" not in text and "nb-0001" not in text
    assert not any(token in text for token in built.canaries())
    assert not any(p.exact_text[:30] in text for p in built.collections[A].passages)
    assert "Started in SAFE mode" in text


@needs_proc
def test_the_server_holds_no_network_socket_over_stdio(server):
    server.ok("enter_collection", collection_id=A)
    server.ok("semantic_search", query="kelp")
    assert inet_sockets(server.conn.pid) == []


def test_the_configured_passage_context_and_search_cap_are_honoured(fresh, built):
    client = fresh("--passage-context", "40", "--max-search-results", "5")
    client.ok("enter_collection", collection_id=A)
    long = built.collections[A].passage("long_context")
    passage = client.ok("fetch_passage", source_id=long.source_id)["passage"]
    assert len(passage["context_before"]) == len(passage["context_after"]) == 40
    body = client.ok("semantic_search", query="the of and a with", k=20)
    assert body["metadata"]["k_applied"] == 5 and len(body["results"]) == 5
    assert len(client.ok("semantic_search", query="the of and a with")["results"]) == 5
    assert client.ok("list_constraints")["limits"]["max_passage_context"] == 40


def test_the_console_script_is_installed_and_lists_the_seed_configuration():
    script = Path(sys.executable).parent / "rc-open-notebook"
    proc = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    for flag in ("--notebooks", "--passage-context", "--max-search-results", "--stream-timeout",
                 "--stream-chunk-size", "--http", "--port"):
        assert flag in proc.stdout
