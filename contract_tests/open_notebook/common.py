"""Helpers of the open-notebook checks: a session spoken to in the seed's tool names, the error
taxonomy through the suite's one error assertion, and the fixture's passages and artifacts
found the way a client finds them (semantic_search, list_artifact_sets), never by guessing
identifiers: the seed leaves their form to the implementation."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from contract_tests.contracts import specs as contracts
from contract_tests.implementation.calls import Calls
from contract_tests.implementation.names import find_list
from contract_tests.open_notebook import PROFILES
from contract_tests.synthetic.canaries import strings
from contract_tests.synthetic.notebook_generator import ArtifactInfo, PassageInfo
from contract_tests.synthetic.notebooks import ROLES, NotebooksFixture
from contract_tests.verdicts.checks import called_ok, short, tool_output
from contract_tests.verdicts.findings import Finding, RequirementFailure, blocked
from contract_tests.verdicts.running import own

PROFILE, = PROFILES  # the folder's one profile
profiles_mark = pytest.mark.profiles(PROFILE)
# The collection-scoped tools (the seed's "Precondition: Active collection context required").
COLLECTION_SCOPED = ("list_artifact_sets", "semantic_search", "fetch_passage", "retrieve_artifact",
                     "begin_result_stream")
# The seed's literal values; tests/test_open_notebook_profile.py checks each is quoted in the spec.
STEP_ORDER = ("reference_identifiers", "passages", "dense_sections", "artifact_links")
PASSAGE_DISCLAIMER = ("This is a quoted passage from human-authored material. It is provided as-is with no "
                      "interpretation.")
ARTIFACT_DISCLAIMER = ("This artifact is derived material. It is offered for inspection only and carries no "
                       "authority. Verify against source notebooks for authoritative content.")
NOTES = {  # (tool, field) -> text (ON-TEXT-001)
    ("enter_collection", "scope_note"): ("All subsequent operations restricted to this collection until exit or "
                                         "new enter_collection call"),
    ("enter_collection", "preload_note"): "No data preloaded. Invoke retrieval tools explicitly.",
    ("semantic_search", "note"): "Full text not included. Use fetch_passage to retrieve content.",
    ("begin_result_stream", "note"): "No content returned. Use next_stream_chunk to retrieve incrementally.",
    ("explain_provenance", "interpretation_note"): ("This provenance chain is descriptive only. No new "
                                                    "interpretation has been added."),
}
MUTATION_PROHIBITIONS = (
    "writing notebooks", "editing notebooks", "deleting notebooks", "modifying vectors", "modifying embeddings",
    "generating new knowledge", "applying reasoning outcomes", "persisting memory", "triggering workflows",
    "scheduling tasks", "calling external tools", "expanding affordances dynamically")
REFUSAL_CONDITIONS = (
    "requests for mutation", "requests for reasoning", "requests for decision-making",
    "requests for external tool invocation", "requests for memory persistence",
    "ambiguous requests (when scope reduction insufficient)")
INTERPRETATION_RULE = {  # list_constraints' interpretation_rule (ON-WORLD-005)
    "when_ambiguous": ("reduce scope", "return less data", "prefer references over content",
                       "prefer artifacts over synthesis"),
    "when_in_doubt": ("do not answer", "explain why")}
AVAILABLE_OPERATIONS = COLLECTION_SCOPED
FORBIDDEN_RECOVERY = "This world is read-only. Use external tools for mutation."  # assertReadOnly's (ON-TEXT-003)


def padded(query: str) -> str:
    """A query sent with white space around it, which a server may trim in its echo."""
    return f" {query}\n"


def echoes(echoed: Any, sent: str) -> bool:
    """An echoed query is the query sent, surrounding white space possibly trimmed (the seed's
    `query: string` says no more; ON-SRCH-009, ON-STRM-006 and ON-STRM-014 read it alike)."""
    return isinstance(echoed, str) and echoed.strip() == sent.strip()


def error_type(document: Any) -> Any:
    return (document.get("error") or {}).get("type") if isinstance(document, dict) else None


def as_failure(response: dict[str, Any]) -> dict[str, Any]:
    """The seed's own sketch (Tool Execution) returns whatever executeToolSafely gives, an error
    object included, as a plain result: a successful result whose JSON is exactly the taxonomy's
    envelope is read as a failure on the tool_result channel (isError set), so every check sees
    one failure whichever of the three the server uses."""
    result = response.get("result") if "jsonrpc" in response else None
    if not isinstance(result, dict) or result.get("isError"):
        return response
    document = result.get("structuredContent")
    if document is None:
        blocks = [b.get("text", "") for b in result.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"]
        try:
            document = json.loads(blocks[0]) if len(blocks) == 1 else None
        except ValueError:
            document = None
    envelope = isinstance(document, dict) and set(document) == {"error"} and isinstance(document["error"], dict) \
        and isinstance(document["error"].get("type"), str)
    return {**response, "result": {**result, "isError": True}} if envelope else response


def result_meta(response: dict[str, Any]) -> dict[str, Any]:
    """Where a result may carry the seed's result metadata: {place: the dict there}."""
    result = response.get("result") or {}
    return {place: result[place] for place in ("metadata", "_meta") if isinstance(result.get(place), dict)}


@dataclass
class Found:
    """A fixture passage as the server serves it: its reference and fetch_passage's body.
    `exact` is False for a stand-in: a passage of the collection search did find, served when
    the one asked for was not (which passages a query finds is the server's, ON-SRCH-011)."""
    source_id: str
    pointer: dict[str, Any]
    body: dict[str, Any]
    exact: bool = True

    @property
    def text(self) -> Any:
        return (self.body.get("passage") or {}).get("exact_text")


# What blocks a check that needs a passage or an artifact the server serves: seed requirements
# only (an advisory never decides a seed check). ON-SRCH-012: no search of the collection's own
# passages gave a reference fetch_passage answers; ON-ART-012: retrieve_artifact answers no
# identifier list_artifact_sets gives.
NO_PASSAGE = "ON-SRCH-012"
NO_ARTIFACT = "ON-ART-012"


def locations(fixture: NotebooksFixture, role: str, text: Any) -> set[tuple[str, int | None]]:
    """(notebook id, page) of every place of `role`'s collection whose text holds `text`
    (page None: across a page boundary only)."""
    out: set[tuple[str, int | None]] = set()
    if not isinstance(text, str) or not text:
        return out
    for nb_id, notebook in fixture.collection(role).notebooks.items():
        pages = {n for n, page in enumerate(notebook.page_texts, 1) if text in page}
        out |= {(nb_id, n) for n in pages} or ({(nb_id, None)} if text in notebook.text else set())
    return out


def places(fixture: NotebooksFixture, role: str, found: Found, passage: PassageInfo) -> set[tuple[str, int | None]]:
    """Where the passage `found` serves is in the fixture: the fixture passage's own notebook
    and page, or for a stand-in every place its text is (else the place search pointed at)."""
    if found.exact:
        return {(passage.notebook_id, passage.page)}
    return locations(fixture, role, found.text) or {(found.pointer.get("notebook_id"), found.pointer.get("page"))}


@dataclass
class Session(Calls):
    """One MCP session (a stdio process or an HTTP session), over raw JSON-RPC."""
    conn: Any
    profile: contracts.Profile
    fixture: NotebooksFixture
    found: dict[tuple[str, str], Found] = field(default_factory=dict)
    stand_ins: dict[str, Found] = field(default_factory=dict)  # role -> a passage search did find
    artifacts: dict[str, dict[str, ArtifactInfo]] = field(default_factory=dict)  # role -> wire id -> artifact

    def read(self, response: dict[str, Any]) -> dict[str, Any]:
        return as_failure(response)

    def accept(self, tool: str, body: Any, request: str, req: str) -> dict[str, Any]:
        """A success is a JSON object."""
        if not isinstance(body, dict):
            raise RequirementFailure([Finding(req, f"the result is not a JSON object: {short(body)}", None, request)])
        return body

    def enter(self, role: str, *, req: str | None = None) -> dict[str, Any]:
        """Enter `role`'s collection; if it cannot be entered, `req` is blocked by the check that
        failed: ON-COLL-001 when the collection is not even listed (e.g. a server that ignores
        {notebooks}), ON-COLL-003 when it is listed but cannot be entered."""
        req = own(req)
        cid = ROLES[role]
        response, request = self.raw("enter_collection", {"collection_id": cid})
        if not called_ok(response):
            by = self.enter_blocker(cid)
            raise blocked(f"enter_collection {cid} failed (see {by}): {short(response, 200)}", req=req, by=by,
                          request=request)
        return tool_output(response, req=req)

    def enter_blocker(self, cid: str) -> str:
        listed, _ = self.raw("list_collections", {})
        body = tool_output(listed, req="ON-COLL-001") if called_ok(listed) else {}
        ids = [c.get("collection_id") for c in (body or {}).get("collections") or [] if isinstance(c, dict)]
        return "ON-COLL-003" if cid in ids else "ON-COLL-001"

    # -- finding the fixture's passages and artifacts -------------------------------------------
    def find(self, role: str, passage: PassageInfo, *, req: str | None = None, exact: bool = False) -> Found:
        """The server's passage for a fixture passage: searched by its text, then the result on
        its notebook (and page) whose fetched text is it, holds it, or is held by it. The session
        must be in `role`'s collection. When search does not find that one, a stand-in (any
        passage of the collection search finds, `Found.exact` False) unless `exact`; with no
        passage found at all, blocked by ON-SRCH-012 (a seed requirement, never ON-SRCH-011)."""
        req = own(req)
        key = (role, passage.source_id)
        if key in self.found:
            return self.found[key]
        args = {"query": passage.exact_text, "k": 50}
        response, request = self.raw("semantic_search", args)
        results = (tool_output(response, req=req) or {}).get("results") or [] if called_ok(response) else []
        best: tuple[int, Found] | None = None
        for result in results:
            pointer = result.get("source_pointer") or {} if isinstance(result, dict) else {}
            if not isinstance(pointer, dict) or pointer.get("notebook_id") != passage.notebook_id \
                    or pointer.get("page") not in (None, passage.page):
                continue
            fetched, _ = self.raw("fetch_passage", {"source_id": result.get("reference_id")})
            if not called_ok(fetched):
                continue
            body = tool_output(fetched, req=req)
            text = ((body or {}).get("passage") or {}).get("exact_text")
            if not isinstance(text, str) or not text:
                continue
            rank = 0 if text == passage.exact_text else 1 if passage.exact_text in text else \
                2 if text in passage.exact_text else None
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, Found(result["reference_id"], pointer, body))
        if best is not None:
            self.found[key] = best[1]
            return best[1]
        if not exact:
            return self.stand_in(role, req=req)
        raise blocked(f"semantic_search for the fixture's {passage.kind} passage found no result on its "
                      "notebook and page whose text matches (see ON-SRCH-011)", req=req, by="ON-SRCH-011",
                      request=request)

    def stand_in(self, role: str, *, req: str | None = None) -> Found:
        """Any passage of `role`'s collection that search finds and fetch_passage answers: the
        collection's passages searched by their text (k 50) in turn, their results fetched,
        until one answers. None answers: blocked by ON-SRCH-012 (whose check fails then)."""
        req = own(req)
        if role in self.stand_ins:
            return self.stand_ins[role]
        for passage in self.fixture.collection(role).passages:
            response, _request = self.raw("semantic_search", {"query": passage.exact_text, "k": 50})
            results = (tool_output(response, req=req) or {}).get("results") or [] if called_ok(response) else []
            for result in results:
                if not isinstance(result, dict) or not isinstance(result.get("reference_id"), str):
                    continue
                fetched, _ = self.raw("fetch_passage", {"source_id": result["reference_id"]})
                body = tool_output(fetched, req=req) if called_ok(fetched) else None
                text = ((body or {}).get("passage") or {}).get("exact_text") if isinstance(body, dict) else None
                if isinstance(text, str) and text:
                    pointer = result.get("source_pointer") if isinstance(result.get("source_pointer"), dict) else {}
                    self.stand_ins[role] = Found(result["reference_id"], pointer, body, exact=False)
                    return self.stand_ins[role]
        raise blocked(f"no search of the {role} collection's passages gave a reference fetch_passage answers "
                      f"(see {NO_PASSAGE})", req=req, by=NO_PASSAGE)

    def fetched(self, query: str, k: int = 10, *,
                req: str | None = None) -> list[tuple[dict[str, Any], dict[str, Any], str]]:
        """Search, then fetch every result: (search result, fetch_passage body, request) of
        each fetch that succeeded."""
        req = own(req)
        args = {"query": query, "k": k}
        response, request = self.raw("semantic_search", args)
        if not called_ok(response):
            raise blocked(f"semantic_search failed: {short(response, 200)}", req=req, by=NO_PASSAGE, request=request)
        body = tool_output(response, req=req)
        body = body if isinstance(body, dict) else {}
        out = []
        for result in body.get("results") or []:
            if not isinstance(result, dict) or not isinstance(result.get("reference_id"), str):
                continue
            response, request = self.raw("fetch_passage", {"source_id": result["reference_id"]})
            if called_ok(response):
                out.append((result, tool_output(response, req=req), request))
        return out

    def fetched_all(self, queries: list[str], k: int = 5, *,
                    req: str | None = None) -> list[tuple[dict[str, Any], dict[str, Any], str]]:
        """fetched() of every query; blocked (by ON-SRCH-012) when no search result could be fetched:
        a check of fetched passages that saw none has checked nothing."""
        req = own(req)
        out = []
        for query in queries:
            try:
                out += self.fetched(query, req=req, k=k)
            except RequirementFailure:
                continue  # this query's search failed; the others may still give passages
        if not out:
            raise blocked(f"no search result of the fixture's passages could be fetched (see {NO_PASSAGE})", req=req,
                          by=NO_PASSAGE)
        return out

    def artifact_ids(self, *, req: str | None = None, sets: bool = True) -> dict[str, list[str]]:
        """Set id -> the artifact ids list_artifact_sets names for it, in the active collection;
        for a set that names none (the seed's own listing has no field for them), its
        artifact_set_id, the one identifier the seed's listing gives (unless `sets` is False)."""
        req = own(req)
        body = self.ok("list_artifact_sets", {}, req=req)
        out: dict[str, list[str]] = {}
        for entry in body.get("artifact_sets") or []:
            if not isinstance(entry, dict):
                continue
            items = find_list(self.profile, "list_artifact_sets.artifact_ids", entry) or []
            ids = [i if isinstance(i, str) else i.get("artifact_id") for i in items
                   if isinstance(i, str) or isinstance(i, dict)]
            ids = [i for i in ids if isinstance(i, str)]
            set_id = entry.get("artifact_set_id")
            out[str(set_id)] = ids or ([set_id] if sets and isinstance(set_id, str) else [])
        return out

    def artifact_map(self, role: str, *, req: str | None = None) -> dict[str, ArtifactInfo]:
        """Wire id -> the fixture artifact it names, for the collection of `role` (the session
        must be in it): listed ids matched by their contents, else by ending with the layout's
        artifact_id, else in the manifest's order."""
        req = own(req)
        if role in self.artifacts:
            return self.artifacts[role]
        listed = self.artifact_ids(req=req)
        layout: dict[str, list[ArtifactInfo]] = {}
        for artifact in self.fixture.collection(role).artifacts:
            layout.setdefault(artifact.artifact_set_id, []).append(artifact)
        mapping: dict[str, ArtifactInfo] = {}
        for set_id, artifacts in layout.items():
            ids = listed.get(set_id, [])
            if not ids:
                continue
            remaining = list(artifacts)
            for wire in ids:
                response, _ = self.raw("retrieve_artifact", {"artifact_id": wire})
                if wire == set_id and not called_ok(response):
                    continue  # a set's own id, tried because the set names none: not an artifact's
                contents = (tool_output(response, req=req) or {}).get("contents") if called_ok(response) else None
                match = next((a for a in remaining if self.fixture.payload(a) == contents), None) or \
                    next((a for a in remaining if wire == a.local_id or wire.endswith(a.local_id)
                          and not wire[-len(a.local_id) - 1].isalnum()), None)
                if match is None and len(ids) == len(artifacts):
                    match = artifacts[ids.index(wire)] if artifacts[ids.index(wire)] in remaining else None
                if match is not None:
                    mapping[wire] = match
                    remaining.remove(match)
        if not mapping:
            raise blocked(f"retrieve_artifact answers no identifier list_artifact_sets gives (see {NO_ARTIFACT})",
                          req=req, by=NO_ARTIFACT)
        self.artifacts[role] = mapping
        return mapping


def content_tokens(fixture: NotebooksFixture, *, titles: bool = True) -> dict[str, str]:
    """Label -> a text that only notebook or artifact content holds: every collection's
    canaries (titles optional: a notebook title is metadata provenance may name) and the
    active collection's notable passages of 40 characters or more."""
    out = {}
    for role in ROLES:
        for kind, token in fixture.collection(role).canaries.items():
            if titles or kind != "title":
                out[f"{role} {kind} canary"] = token
    for n, passage in enumerate(fixture.collection("active").passages, 1):
        if len(passage.exact_text) >= 40 and passage.kind != "canary":
            out[f"active {passage.kind} passage {n}"] = passage.exact_text
    return out


def hits(body: Any, needles: dict[str, str], echoed: tuple[str, ...] = ()) -> list[str]:
    """The labels of `needles` found in a JSON body, after removing every string that is only
    the caller's own text (`echoed`: e.g. the query a result repeats)."""
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items()}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return "" if isinstance(value, str) and value in echoed else value
    found = list(strings(strip(body)))  # decoded strings: JSON escapes cannot hide a needle
    return sorted(label for label, needle in needles.items() if any(needle in text for text in found))


__all__ = ["AVAILABLE_OPERATIONS", "COLLECTION_SCOPED", "FORBIDDEN_RECOVERY", "Found", "NO_ARTIFACT", "NO_PASSAGE",
           "Session", "as_failure", "content_tokens", "echoes", "locations", "places", "error_type", "hits", "padded", "profiles_mark", "result_meta", "PROFILE", "ROLES", "STEP_ORDER"]


def listed_tools(server) -> list[dict]:
    """tools/list as sent on the wire (an SDK client may drop fields MCP does not define)."""
    return (server.request("tools/list", {}).get("result") or {}).get("tools") or []
