"""Start the open-notebook reference with one deliberate defect (or as a correct variant):
`python launch_open_notebook.py NAME --notebooks ROOT [server args]`.

Each mutant patches the reference from the outside and declares beside itself the ids the
suite must report for it (tests/test_mutants.py); each variant takes the other side of the
choices seed 004 leaves open, and the suite must pass it (tests/test_variants.py).
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

try:
    from tests.mutants._dispatch import mutant, run, variant
except ImportError:  # run as a script from tests/mutants
    from _dispatch import mutant, run, variant  # type: ignore[no-redef]

from reference.open_notebook import errors, layout, library, refusals, server, session, streams, tools, world

PROFILE = "open-notebook"


def _wrap(method: str, transform) -> None:
    """Replace Tools._<method> by transform(original result, session, **arguments)."""
    original = getattr(tools.Tools, method)

    def patched(self, sess, **arguments):
        return transform(original(self, sess, **arguments), sess, **arguments)
    setattr(tools.Tools, method, patched)


def _checksum_with_context(body, sess, source_id):
    """A fetch_passage body whose checksum covers the passage with its context around it."""
    import hashlib
    passage = body["passage"]
    whole = passage["context_before"] + passage["exact_text"] + passage["context_after"]
    body["integrity"] = {"checksum": hashlib.sha256(whole.encode()).hexdigest(),
                         "verified": body["integrity"]["verified"]}
    return body


def _wrap_responses(transform) -> None:
    """Pass every next_stream_chunk response through transform(body, stream), which edits it."""
    original = streams.next_response

    def next_response(stream):
        body, closed = original(stream)
        transform(body, stream)
        return body, closed
    streams.next_response = next_response
    tools.streams = streams


# -- the surface ----------------------------------------------------------------------------------
@mutant("ON-TOOL-001", "ON-WORLD-001", profile=PROFILE)
def on_twelfth_tool():
    """Lists a twelfth tool, summarize_collection, that describe_world does not name."""
    original = server.tool_list

    def tool_list():
        extra = server.types.Tool(name="summarize_collection", description="Summarizes the active collection",
                                  input_schema={"type": "object", "properties": {}, "required": []},
                                  annotations=server.ANNOTATIONS, meta=dict(world.TOOL_METADATA))
        return original() + [extra]
    server.tool_list = tool_list


@mutant("ON-TOOL-003", profile=PROFILE)
def on_no_reversibility_declared():
    """Lists the tools without the seed's metadata and without annotations."""
    server.tool_list = lambda: [server.types.Tool(name=name, description=description, input_schema=schema)
                                for name, (description, schema) in world.TOOLS.items()]


@mutant("ON-OBS-001", profile=PROFILE)
def on_no_result_metadata():
    """Results carry no provenance_available."""
    def to_result(outcome):
        content = [server.types.TextContent(type="text", text=json.dumps(outcome.body, ensure_ascii=False))]
        if outcome.is_error:
            return server.types.CallToolResult(content=content, is_error=True)
        return server.types.CallToolResult(content=content, structured_content=outcome.body)
    server.to_result = to_result


@mutant("ON-TOOL-004", profile=PROFILE)
def on_a_prompt_offered():
    """Offers a prompt, summarize_collection, beside the tools."""
    original = server.Server

    async def list_prompts(ctx, params):
        return server.types.ListPromptsResult(prompts=[server.types.Prompt(
            name="summarize_collection", description="Summarize the active collection")])

    def build(*args, **kwargs):
        return original(*args, on_list_prompts=list_prompts, **kwargs)
    server.Server = build


# -- sessions and the Domicile invariants ---------------------------------------------------------
@mutant("ON-DOM-006", "ON-STRM-007", profile=PROFILE, transport="http")
def on_context_shared_across_sessions():
    """Every HTTP session shares one state: one session's collection and streams are another's."""
    shared = session.Session()
    session.SessionStore.get = lambda self, key: shared


_STATE_FILE = ".rc-open-notebook-context"


@mutant("ON-DOM-007", "ON-RO-002", profile=PROFILE)
def on_context_kept_after_reconnect():
    """Remembers the active collection in HOME and restores it when the server starts again."""
    state = Path(os.environ.get("HOME", ".")) / _STATE_FILE
    original_enter, original_get = session.Session.enter, session.SessionStore.get

    def enter(self, collection_id):
        original_enter(self, collection_id)
        state.write_text(collection_id, encoding="utf-8")

    def get(self, key):
        fresh = key not in self._sessions
        found = original_get(self, key)
        if fresh and found.has_session and state.is_file():
            found.active = state.read_text(encoding="utf-8")
        return found
    session.Session.enter = enter
    session.SessionStore.get = get


@mutant("ON-DOM-001", profile=PROFILE)
def on_silent_empty_without_collection():
    """Without a collection, collection-scoped tools answer an empty result, not no_collection_context."""
    original = tools.Tools._checked

    def checked(self, sess, name, arguments):
        if name in world.COLLECTION_SCOPED and sess.active is None:
            return {"collection_id": None, "results": [], "artifact_sets": []}
        return original(self, sess, name, arguments)
    tools.Tools._checked = checked


@mutant("ON-DOM-004", profile=PROFILE)
def on_preload_on_enter():
    """Reads every notebook of the collection when it is entered."""
    def read_all(body, sess, collection_id):
        lib = _LIBRARY["library"]
        for notebook in lib.collections[collection_id].notebooks.values():
            (lib.root / notebook.rel_path).read_bytes()
        return body
    _keep_library()
    _wrap("_enter_collection", read_all)


# -- semantic_search --------------------------------------------------------------------------------
@mutant("ON-SRCH-001", profile=PROFILE)
def on_nondeterministic_ranking():
    """Shuffles the ranked hits on every call."""
    original = tools.Tools._hits

    def hits(self, cid, query, k):
        found, total = original(self, cid, query, k)
        random.shuffle(found)
        return found, total
    tools.Tools._hits = hits


@mutant("ON-SRCH-002", profile=PROFILE)
def on_default_k_five():
    """Uses 5 results when k is omitted."""
    original = tools.Tools._semantic_search

    def search(self, sess, query, k=None):
        return original(self, sess, query, 5 if k is None else k)
    tools.Tools._semantic_search = search


@mutant("ON-SRCH-003", profile=PROFILE)
def on_k_unbounded():
    """Applies any k, however far over 50."""
    original = tools.Tools._semantic_search

    def search(self, sess, query, k=None):
        saved = self.config
        self.config = type(saved)(saved.root, saved.max_passage_context, 10_000, saved.stream_timeout_s,
                                  saved.stream_chunk_size)
        try:
            return original(self, sess, query, k)
        finally:
            self.config = saved
    tools.Tools._semantic_search = search


@mutant("ON-SRCH-004", profile=PROFILE)
def on_snippet_over_100():
    """Previews are the passage's first 150 characters."""
    tools.preview = lambda text, limit: text[:150]


@mutant("ON-SRCH-005", profile=PROFILE)
def on_full_text_in_results():
    """Each search result also carries its passage's full text."""
    def search(body, sess, query, k=None):
        cid = sess.active
        for result in body["results"]:
            _nb, passage = _LIBRARY["library"].source(cid, result["reference_id"])
            result["text"] = passage.text
        return body
    _keep_library()
    _wrap("_semantic_search", search)


@mutant("ON-SRCH-007", "ON-ISO-001", profile=PROFILE)
def on_results_from_other_collections():
    """Searches every collection's index, whichever is active."""
    def hits(self, cid, query, k):
        found, total = [], 0
        for other, index in self.library.indexes.items():
            passages = self.library.passages[other]
            some, count = index.search(query, k)
            found += [(passages[h.index], h.score) for h in some]
            total += count
        return sorted(found, key=lambda pair: -pair[1])[:k], total

    def pointer(self, cid, passage):
        owner = next(c for c in self.library.collections.values()
                     if passage in getattr(c.notebooks.get(passage.notebook_id), "passages", ()))
        notebook = owner.notebooks[passage.notebook_id]
        return {"notebook_id": passage.notebook_id, "page": passage.page,
                "timestamp": notebook.page(passage.page).timestamp}
    tools.Tools._hits = hits
    tools.Tools._pointer = pointer


# -- fetch_passage ------------------------------------------------------------------------------------
def _patch_view(change) -> None:
    original = library.Library.read_passage

    def read_passage(self, notebook, passage, context_chars):
        view = original(self, notebook, passage, context_chars)
        return change(view, notebook, passage, context_chars, self)
    library.Library.read_passage = read_passage


@mutant("ON-PASS-001", profile=PROFILE)
def on_passage_paraphrased():
    """Rewords passages ("the" becomes "that", "was" becomes "had been")."""
    _patch_view(lambda view, *_: library.PassageView(
        view.text.replace(" the ", " that ").replace(" was ", " had been "), view.before, view.after, view.verified))


@mutant("ON-PASS-001", profile=PROFILE)
def on_passage_trimmed():
    """Drops a passage's last word (its context stays where it was)."""
    _patch_view(lambda view, *_: library.PassageView(
        view.text.rsplit(" ", 1)[0] if " " in view.text else view.text, view.before, view.after, view.verified))


@mutant("ON-PASS-002", profile=PROFILE)
def on_context_over_500():
    """Gives 600 characters of context on each side."""
    original = library.Library.read_passage
    library.Library.read_passage = lambda self, notebook, passage, context_chars: original(self, notebook, passage, 600)


@mutant("ON-PASS-004", profile=PROFILE)
def on_checksum_of_nothing_served():
    """The passage checksum is the SHA-256 of the notebook's id."""
    def change(body, sess, source_id):
        body["integrity"]["checksum"] = layout.sha256_hex(body["provenance"]["notebook_id"].encode())
        return body
    _wrap("_fetch_passage", change)


@mutant("ON-PASS-006", profile=PROFILE)
def on_outside_reported_as_not_found():
    """A source of another collection is reported as source_not_found."""
    library.errors.source_outside_collection = lambda source_id: errors.source_not_found(source_id)


@mutant("ON-PASS-007", profile=PROFILE)
def on_changed_notebook_served_as_verified():
    """Serves a notebook's current text, changed or not, as verified."""
    _patch_view(lambda view, *_: library.PassageView(view.text, view.before, view.after, True))


# -- artifacts and provenance -------------------------------------------------------------------------
@mutant("ON-ART-003", profile=PROFILE)
def on_missing_disclaimer():
    """retrieve_artifact carries no disclaimer."""
    def drop(body, sess, artifact_id):
        body.pop("disclaimer", None)
        return body
    _wrap("_retrieve_artifact", drop)


@mutant("ON-ART-004", profile=PROFILE)
def on_artifact_not_immutable():
    """retrieve_artifact says immutable: false."""
    def mutable(body, sess, artifact_id):
        body["immutable"] = False
        return body
    _wrap("_retrieve_artifact", mutable)


@mutant("ON-ART-005", profile=PROFILE)
def on_artifact_contents_trimmed():
    """Serves only the first line of a Markdown artifact."""
    def first_line(body, sess, artifact_id):
        if isinstance(body["contents"], str):
            body["contents"] = body["contents"].split("\n", 1)[0]
        return body
    _wrap("_retrieve_artifact", first_line)


@mutant("ON-ART-007", profile=PROFILE)
def on_tampered_artifact_not_verified():
    """Serves an artifact's current bytes without checking its checksum."""
    def read_artifact(self, artifact):
        return layout.contents_of(artifact, (self.root / artifact.rel_path).read_bytes())
    library.Library.read_artifact = read_artifact


@mutant("ON-PROV-001", "ON-PROV-003", profile=PROFILE)
def on_provenance_interpreted():
    """explain_provenance adds an interpretation step quoting the artifact's contents."""
    def interpret(body, sess, id, id_type):  # noqa: A002 - the seed's parameter name
        if id_type == "artifact":
            lib = _LIBRARY["library"]
            contents = lib.read_artifact(lib.artifact(sess.active, id))
            steps = body["provenance"]["transformation_steps"]
            steps.append({"step_order": len(steps) + 1, "tool": "interpreter", "timestamp": 0,
                          "parameters": {"reading": json.dumps(contents)}})
        return body
    _keep_library()
    _wrap("_explain_provenance", interpret)


# -- streams -----------------------------------------------------------------------------------------
@mutant("ON-STRM-002", profile=PROFILE)
def on_guessable_stream_token():
    """Stream tokens count up: stream-000000000001, stream-000000000002, ..."""
    class Counter:
        n = 0

        def token_urlsafe(self, _size):
            Counter.n += 1
            return f"stream-{Counter.n:012d}"
    tools.secrets = Counter()


@mutant("ON-STRM-007", profile=PROFILE, transport="http")
def on_token_accepted_across_sessions():
    """A stream token opens its stream in any session that presents it."""
    registry = {}
    original_add, original_next = session.Session.add_stream, tools.Tools._next_stream_chunk

    def add_stream(self, stream):
        original_add(self, stream)
        registry[stream.token] = stream

    def next_chunk(self, sess, stream_token):
        if stream_token not in sess.streams and stream_token in registry:
            sess.streams[stream_token] = registry[stream_token]
        return original_next(self, sess, stream_token)
    session.Session.add_stream = add_stream
    tools.Tools._next_stream_chunk = next_chunk


@mutant("ON-STRM-009", profile=PROFILE)
def on_expired_token_accepted():
    """Stream tokens never expire."""
    session.Session.expired = lambda self, stream: False


@mutant("ON-STRM-004", profile=PROFILE)
def on_stream_out_of_order():
    """Chunks come artifact links first."""
    original = streams.plan

    def plan(items, chunk_size, context_chars):
        return sorted(original(items, chunk_size, context_chars), key=lambda c: c["chunk_type"] != "artifact_links")
    streams.plan = plan


@mutant("ON-STRM-005", profile=PROFILE)
def on_stream_unexplained():
    """Chunks say nothing of what changed or why."""
    original = streams.plan

    def plan(items, chunk_size, context_chars):
        return [dict(c, what_changed="", why="") for c in original(items, chunk_size, context_chars)]
    streams.plan = plan


@mutant("ON-STRM-008", profile=PROFILE)
def on_forged_token_called_expired():
    """A token never issued is reported as expired, not invalid."""
    errors.stream_invalid = lambda reason: errors.stream_expired(300)


# -- refusals and outputs -------------------------------------------------------------------------------
@mutant("ON-REF-001", "ON-REF-002", profile=PROFILE)
def on_mutation_attempts_ignored():
    """An unknown tool answers an empty success, and undeclared arguments are dropped silently."""
    original = tools.Tools._checked

    def checked(self, sess, name, arguments):
        if name not in world.TOOLS:
            return {}
        if isinstance(arguments, dict):
            declared = world.TOOLS[name][1]["properties"]
            arguments = {k: v for k, v in arguments.items() if k in declared}
        return original(self, sess, name, arguments)
    tools.Tools._checked = checked


@mutant("ON-REF-003", profile=PROFILE)
def on_mutation_refused_as_ambiguous():
    """Mutation attempts are refused as ambiguous_request, not operation_forbidden."""
    errors.forbidden = lambda operation, condition: errors.ambiguous("refused")


@mutant("ON-COLL-002", profile=PROFILE)
def on_list_collections_shows_a_passage():
    """list_collections adds each collection's first passage as a preview."""
    def preview(body, sess):
        lib = _LIBRARY["library"]
        for entry in body["collections"]:
            first = lib.passages[entry["collection_id"]][:3]
            entry["preview"] = " ".join(p.text for p in first)
        return body
    _keep_library()
    _wrap("_list_collections", preview)


@mutant("ON-COLL-006", profile=PROFILE)
def on_list_artifact_sets_shows_a_passage():
    """list_artifact_sets adds the text of the active collection's passages to every set."""
    def preview(body, sess):
        text = " ".join(p.text for p in _LIBRARY["library"].passages[sess.active])
        for entry in body["artifact_sets"]:
            entry["summary"] = text
        return body
    _keep_library()
    _wrap("_list_artifact_sets", preview)


@mutant("ON-WORLD-003", profile=PROFILE)
def on_describe_world_shows_a_passage():
    """describe_world quotes the active collection's passages as examples."""
    def example(body, sess):
        if sess.active is not None:
            body["examples"] = [p.text for p in _LIBRARY["library"].passages[sess.active]]
        return body
    _keep_library()
    _wrap("_describe_world", example)


@mutant("ON-OUT-001", profile=PROFILE)
def on_error_names_the_root():
    """Errors carry the absolute path of the notebooks root."""
    original = errors.ToolError.body

    def body(self):
        out = original(self)
        out["error"]["context"] = {**(out["error"].get("context") or {}), "root": str(_LIBRARY["library"].root)}
        return out
    _keep_library()
    errors.ToolError.body = body


@mutant("ON-LOG-001", profile=PROFILE)
def on_logs_passages():
    """Logs the text of every passage a search finds."""
    def log(body, sess, query, k=None):
        for result in body["results"]:
            server.log.info("found %s", _LIBRARY["library"].source(sess.active, result["reference_id"])[1].text)
        return body
    _keep_library()
    _wrap("_semantic_search", log)


@mutant("ON-RO-001", profile=PROFILE)
def on_read_receipts_in_the_root():
    """Leaves a read receipt beside every artifact it serves."""
    def receipt(body, sess, artifact_id):
        lib = _LIBRARY["library"]
        path = lib.root / lib.artifact(sess.active, artifact_id).rel_path
        path.with_name(path.name + ".read").write_text("1", encoding="utf-8")
        return body
    _keep_library()
    _wrap("_retrieve_artifact", receipt)


# -- more single defects, one per check --------------------------------------------------------------
@mutant("ON-DOM-005", profile=PROFILE)
def on_context_accumulates():
    """Sources of every collection the session entered before stay readable."""
    original_enter, original_fetch = session.Session.enter, tools.Tools._fetch_passage

    def enter(self, collection_id):
        self.__dict__.setdefault("history", set()).add(collection_id)
        original_enter(self, collection_id)

    def fetch(self, sess, source_id):
        found = self.library.sources.get(source_id)
        if found and found[0] != sess.active and found[0] in sess.__dict__.get("history", ()):
            saved, sess.active = sess.active, found[0]
            try:
                return original_fetch(self, sess, source_id)
            finally:
                sess.active = saved
        return original_fetch(self, sess, source_id)
    session.Session.enter = enter
    tools.Tools._fetch_passage = fetch


@mutant("ON-ART-009", profile=PROFILE)
def on_foreign_artifact_served():
    """retrieve_artifact serves an artifact of any collection."""
    def artifact(self, active, requested):
        match = library.ARTIFACT_ID.fullmatch(requested)
        if not match or match.group(1) not in self.collections:
            raise errors.artifact_not_found()
        found = self.collections[match.group(1)].artifact_sets.get(match.group(2))
        if found is None or match.group(3) not in found.artifacts:
            raise errors.artifact_not_found()
        return found.artifacts[match.group(3)]
    library.Library.artifact = artifact
    original = tools.Tools._retrieve_artifact

    def retrieve(self, sess, artifact_id):
        saved, sess.active = sess.active, artifact_id.split(":", 1)[0]
        try:
            return original(self, sess, artifact_id)
        finally:
            sess.active = saved
    tools.Tools._retrieve_artifact = retrieve


@mutant("ON-ERR-001", "ON-ART-008", profile=PROFILE)
def on_plain_text_errors():
    """An unknown artifact fails with a plain-text message, outside the taxonomy's envelope."""
    original = server.to_result

    def to_result(outcome):
        if outcome.error_type == "artifact_not_found":
            return server.types.CallToolResult(content=[server.types.TextContent(type="text", text="not found")],
                                               is_error=True)
        return original(outcome)
    server.to_result = to_result


@mutant("ON-ART-001", profile=PROFILE)
def on_every_artifact_canonical():
    """retrieve_artifact calls every artifact canonical."""
    def canonical(body, sess, artifact_id):
        body["status"] = "canonical"
        return body
    _wrap("_retrieve_artifact", canonical)


@mutant("ON-ART-002", profile=PROFILE)
def on_synthesis_unlabelled():
    """synthesis_metadata says synthesized false for every artifact."""
    def unlabelled(body, sess, artifact_id):
        body["synthesis_metadata"]["synthesized"] = False
        return body
    _wrap("_retrieve_artifact", unlabelled)


@mutant("ON-COLL-001", profile=PROFILE)
def on_collection_counts_wrong():
    """list_collections counts pages as notebooks."""
    def recount(body, sess):
        for entry in body["collections"]:
            entry["notebook_count"] += 1
        return body
    _wrap("_list_collections", recount)


@mutant("ON-WORLD-004", profile=PROFILE)
def on_prohibition_missing():
    """list_constraints leaves out "persisting memory"."""
    world.MUTATION_PROHIBITIONS.remove("persisting memory")


@mutant("ON-TEXT-001", profile=PROFILE)
def on_search_note_reworded():
    """semantic_search's note is reworded."""
    world.SEARCH_NOTE = "Previews only; fetch passages for their text."


@mutant("ON-PASS-005", profile=PROFILE)
def on_passage_disclaimer_reworded():
    """fetch_passage's disclaimer is reworded."""
    world.PASSAGE_DISCLAIMER = "Quoted from a notebook."


@mutant("ON-SHAPE-001", profile=PROFILE)
def on_list_collections_reshaped():
    """list_collections puts its metadata under `meta`."""
    def reshape(body, sess):
        body["meta"] = body.pop("metadata")
        return body
    _wrap("_list_collections", reshape)


@mutant("ON-SRCH-008", profile=PROFILE)
def on_ranking_reversed():
    """Ranks the least relevant passages first."""
    original = tools.Tools._hits

    def hits(self, cid, query, k):
        found, total = original(self, cid, query, 50)
        return list(reversed(found))[:k], total
    tools.Tools._hits = hits


@mutant("ON-STRM-003", profile=PROFILE)
def on_begin_discloses_passages():
    """begin_result_stream also returns the first chunk's passages."""
    def disclose(body, sess, query):
        stream = sess.streams[body["stream_token"]]
        body["first_passages"] = next(c["payload"] for c in stream.chunks if c["chunk_type"] == "passages")
        return body
    _wrap("_begin_result_stream", disclose)


# -- more single defects, one per field the seed fixes ---------------------------------------------
@mutant("ON-TOOL-002", profile=PROFILE)
def on_k_published_as_a_string():
    """Publishes semantic_search's k as a string (the calls are still checked as before)."""
    original = server.tool_list

    def tool_list():
        listed = original()
        for tool in listed:
            if tool.name == "semantic_search":
                schema = json.loads(json.dumps(tool.input_schema))
                schema["properties"]["k"] = {"type": "string"}
                tool.input_schema = schema
        return listed
    server.tool_list = tool_list


@mutant("ON-WORLD-002", profile=PROFILE)
def on_world_with_authority():
    """describe_world claims an authority level of its own."""
    _world_says("authority_level", "advisory")


@mutant("ON-WORLD-002", profile=PROFILE)
def on_purpose_incomplete():
    """describe_world's purpose leaves "prevent ungoverned synthesis" out."""
    original = world.describe_world

    def describe_world():
        body = original()
        body["purpose"] = [p for p in body["purpose"] if p != "prevent ungoverned synthesis"]
        return body
    world.describe_world = describe_world


@mutant("ON-COLL-003", profile=PROFILE)
def on_enter_without_an_operation():
    """enter_collection's available_operations leaves begin_result_stream out."""
    def answer(body, sess, collection_id):
        body["available_operations"] = [op for op in body["available_operations"] if op != "begin_result_stream"]
        return body
    _wrap("_enter_collection", answer)


def _world_says(key, value):
    """describe_world's `world` with one field changed."""
    original = world.describe_world

    def describe_world():
        body = original()
        body["world"][key] = value
        return body
    world.describe_world = describe_world


@mutant("ON-COLL-003", profile=PROFILE)
def on_enter_without_context_established():
    """enter_collection answers context_established false (and still enters)."""
    def answer(body, sess, collection_id):
        body["context_established"] = False
        return body
    _wrap("_enter_collection", answer)


@mutant("ON-COLL-004", profile=PROFILE)
def on_unknown_collection_forbidden():
    """An unknown collection id is refused as operation_forbidden, not collection_not_found."""
    errors.collection_not_found = lambda active: errors.ToolError(
        "operation_forbidden", "That collection cannot be entered.", context={"active_collection": active})
    tools.errors = errors


@mutant("ON-COLL-005", profile=PROFILE)
def on_artifact_count_off_by_one():
    """list_artifact_sets counts one artifact too many in every set."""
    def answer(body, sess):
        for entry in body["artifact_sets"]:
            entry["artifact_count"] += 1
        return body
    _wrap("_list_artifact_sets", answer)


@mutant("ON-DOM-003", profile=PROFILE)
def on_enter_returns_a_notebook():
    """enter_collection answers with the text of the collection's first notebook."""
    def answer(body, sess, collection_id):
        lib = _LIBRARY["library"]
        first = next(iter(lib.collections[collection_id].notebooks.values()))
        body["first_notebook"] = (lib.root / first.rel_path).read_text(encoding="utf-8")
        return body
    _keep_library()
    _wrap("_enter_collection", answer)


@mutant("ON-PASS-003", profile=PROFILE)
def on_passage_from_untitled_notebook():
    """fetch_passage's provenance gives the notebook's id as its title."""
    def answer(body, sess, source_id):
        body["provenance"]["notebook_title"] = body["provenance"]["notebook_id"]
        return body
    _wrap("_fetch_passage", answer)


@mutant("ON-ART-006", profile=PROFILE)
def on_artifact_without_steps():
    """retrieve_artifact's provenance drops the transformation steps."""
    def answer(body, sess, artifact_id):
        body["provenance"]["transformation_steps"] = []
        return body
    _wrap("_retrieve_artifact", answer)


@mutant("ON-PROV-002", profile=PROFILE)
def on_source_origin_without_author():
    """explain_provenance for a source names its origin notebook's author as unknown."""
    def answer(body, sess, id, id_type):  # noqa: A002
        if id_type == "source":
            body["provenance"]["origin_notebook"]["author"] = "unknown"
        return body
    _wrap("_explain_provenance", answer)


@mutant("ON-STRM-001", profile=PROFILE)
def on_stream_policy_reversed():
    """begin_result_stream announces the disclosure steps in reverse order."""
    def answer(body, sess, query):
        body["disclosure_policy"]["step_order"].reverse()
        return body
    _wrap("_begin_result_stream", answer)


@mutant("ON-STRM-006", profile=PROFILE)
def on_stream_never_closed():
    """The completion response says the stream is still open."""
    original = streams.next_response

    def next_response(stream):
        body, closed = original(stream)
        if body.get("chunk_type") == "stream_complete":
            body["continuation"]["stream_closed"] = False
        return body, closed
    streams.next_response = next_response
    tools.streams = streams


@mutant("ON-COLL-007", profile=PROFILE)
def on_artifact_set_missing_an_id():
    """list_artifact_sets leaves the last artifact id of every set out."""
    def answer(body, sess):
        for entry in body["artifact_sets"]:
            entry["artifact_ids"] = entry["artifact_ids"][:-1]
        return body
    _wrap("_list_artifact_sets", answer)


@mutant("ON-DOM-002", profile=PROFILE)
def on_provenance_without_collection():
    """explain_provenance answers outside any collection, looking the id up in every collection."""
    original = tools.Tools._checked

    def checked(self, sess, name, arguments):
        if name != "explain_provenance" or sess.active is not None:
            return original(self, sess, name, arguments)
        for cid in self.library.collections:
            sess.active = cid
            try:
                return original(self, sess, name, arguments)
            except errors.ToolError:
                continue
            finally:
                sess.active = None
        raise errors.no_collection_context()
    tools.Tools._checked = checked


@mutant("ON-SRCH-006", profile=PROFILE)
def on_preview_is_the_whole_short_passage():
    """A passage of up to 100 characters is previewed whole."""
    tools.preview = lambda text, limit: text[:limit]


@mutant("ON-PASS-008", profile=PROFILE)
def on_passage_timestamp_dropped():
    """fetch_passage's provenance never gives the page's timestamp."""
    def answer(body, sess, source_id):
        body["provenance"]["timestamp"] = None
        return body
    _wrap("_fetch_passage", answer)


# -- identifiers, boundaries, argument errors -------------------------------------------------------------
@mutant("ON-PASS-009", profile=PROFILE)
def on_fetch_ignores_id():
    """fetch_passage answers the active collection's first passage for every known id (echoing the id)."""
    original = tools.Tools._fetch_passage

    def fetch(self, sess, source_id):
        self.library.source(sess.active, source_id)  # unknown and foreign ids still fail
        first = next(sid for sid, (cid, _p) in self.library.sources.items() if cid == sess.active)
        return original(self, sess, first) | {"source_id": source_id}
    tools.Tools._fetch_passage = fetch


@mutant("ON-ART-010", profile=PROFILE)
def on_retrieve_ignores_id():
    """retrieve_artifact answers the active collection's first artifact for every known id (echoing the id)."""
    original = tools.Tools._retrieve_artifact

    def retrieve(self, sess, artifact_id):
        self.library.artifact(sess.active, artifact_id)
        first = next(library.artifact_id(sess.active, a) for s in
                     self.library.collections[sess.active].artifact_sets.values() for a in s.artifacts.values())
        return original(self, sess, first) | {"artifact_id": artifact_id}
    tools.Tools._retrieve_artifact = retrieve


@mutant("ON-PROV-004", profile=PROFILE)
def on_foreign_source_explained():
    """explain_provenance explains a source of any collection, not only the active one's."""
    original = tools.Tools._explain_provenance

    def explain(self, sess, id, id_type):  # noqa: A002 - the seed's argument name
        found = self.library.sources.get(id) if id_type == "source" else None
        if found is None or found[0] == sess.active:
            return original(self, sess, id, id_type)
        active = sess.active
        sess.active = found[0]
        try:
            return original(self, sess, id, id_type)
        finally:
            sess.active = active
    tools.Tools._explain_provenance = explain


@mutant("ON-ERR-002", profile=PROFILE)
def on_plain_text_validation():
    """A missing or mistyped argument is answered with an SDK-style plain-text validation message."""
    original = server.to_result

    def to_result(outcome):
        context = (outcome.body.get("error") or {}).get("context") or {} if outcome.is_error else {}
        if context.get("reason") in ("missing_argument", "invalid_argument"):
            text = f"1 validation error for call\n{context.get('argument')}\n  Field required [type=missing]"
            return server.types.CallToolResult(content=[server.types.TextContent(type="text", text=text)],
                                               is_error=True)
        return original(outcome)
    server.to_result = to_result


@mutant("ON-DOM-005", profile=PROFILE)
def on_stream_survives_enter():
    """A stream begun in one collection keeps serving it after another collection is entered."""
    def enter(self, collection_id):
        self.active = collection_id
    session.Session.enter = enter


@mutant("ON-ERR-003", profile=PROFILE)
def on_stream_errors_as_jsonrpc():
    """Stream token errors come as JSON-RPC errors, every other failure as an isError result."""
    from mcp.shared.exceptions import MCPError
    original = server.to_result

    def to_result(outcome):
        if outcome.error_type in ("stream_token_invalid", "stream_token_expired"):
            raise MCPError(-32010, outcome.body["error"]["message"], outcome.body)
        return original(outcome)
    server.to_result = to_result


# -- the seed's literals and stream bookkeeping -----------------------------------------------------------
@mutant("ON-WORLD-002", profile=PROFILE)
def on_world_persistence_claimed():
    """describe_world says the world persists session memory."""
    _world_says("persistence", "session memory and external artifacts")


@mutant("ON-TEXT-002", profile=PROFILE)
def on_no_collection_reworded():
    """no_collection_context says its own words, not the seed's."""
    errors.no_collection_context = lambda: errors.ToolError(
        "no_collection_context", "Please select a collection.", recovery="Use enter_collection")


@mutant("ON-TEXT-003", profile=PROFILE)
def on_forbidden_recovery_reworded():
    """operation_forbidden refusals carry another recovery than assertReadOnly's."""
    original = errors.forbidden

    def forbidden(operation, condition):
        error = original(operation, condition)
        error.recovery = "Mutation is not available here."
        return error
    errors.forbidden = forbidden
    refusals.errors = errors


@mutant("ON-PASS-011", profile=PROFILE)
def on_fetch_error_without_source_id():
    """fetch_passage's source_not_found and source_outside_collection errors do not name the source."""
    original = errors.ToolError.body

    def body(self):
        document = original(self)
        document["error"].pop("source_id", None)
        return document
    errors.ToolError.body = body


@mutant("ON-SRCH-009", profile=PROFILE)
def on_search_names_the_first_collection():
    """semantic_search names the library's first collection, whichever is active."""
    def name_first(body, sess, query, k=None):
        body["collection_id"] = sorted(_LIBRARY["library"].collections)[0]
        return body
    _keep_library()
    _wrap("_semantic_search", name_first)


@mutant("ON-STRM-011", profile=PROFILE)
def on_stream_order_random():
    """Each stream orders its references at random."""
    original = streams.plan

    def plan(items, chunk_size, context_chars):
        items = {step: random.sample(listed, len(listed)) for step, listed in items.items()}
        return original(items, chunk_size, context_chars)
    streams.plan = plan


@mutant("ON-STRM-012", profile=PROFILE)
def on_total_chunks_counts_the_completion():
    """summary.total_chunks counts the completion response too."""
    original = streams.next_response

    def next_response(stream):
        body, closed = original(stream)
        if "summary" in body:
            body["summary"]["total_chunks"] += 1
        return body, closed
    streams.next_response = next_response


@mutant("ON-STRM-014", "ON-STRM-006", profile=PROFILE)
def on_stream_query_cut():
    """begin_result_stream and the completion summary name the query cut to its first 20 characters."""
    def cut(body, sess, query):
        body["query"] = query[:20]
        return body
    _wrap("_begin_result_stream", cut)
    _wrap_responses(lambda body, stream: "summary" in body and body["summary"].update(query=stream.query[:20]))


@mutant("ON-PROV-005", profile=PROFILE)
def on_provenance_always_a_source():
    """explain_provenance answers id_type source whatever it was asked."""
    def as_source(body, sess, id, id_type):  # noqa: A002 - the tool's own argument name
        body["id_type"] = "source"
        return body
    _wrap("_explain_provenance", as_source)


@mutant("ON-WORLD-005", profile=PROFILE)
def on_interpretation_rule_incomplete():
    """list_constraints' interpretation_rule leaves out "explain why"."""
    original = tools.Tools._list_constraints

    def constraints(self, sess):
        body = json.loads(json.dumps(original(self, sess)))
        body["interpretation_rule"]["when_in_doubt"] = [i for i in body["interpretation_rule"]["when_in_doubt"]
                                                        if i != "explain why"]
        return body
    tools.Tools._list_constraints = constraints


@mutant("ON-COLL-008", profile=PROFILE)
def on_collections_rotate():
    """Each list_collections call starts the list one collection later than the call before."""
    calls = [0]

    def rotate(body, sess):
        listed = body["collections"]
        shift = calls[0] % len(listed) if listed else 0
        calls[0] += 1
        body["collections"] = listed[shift:] + listed[:shift]
        return body
    _wrap("_list_collections", rotate)


@mutant("ON-REF-001", profile=PROFILE)
def on_generate_knowledge_answered():
    """A hidden tool, generate_knowledge, answers a success (every other unknown tool is refused)."""
    original = tools.Tools._checked

    def checked(self, sess, name, arguments):
        if name == "generate_knowledge":
            return {"generated": "a new note", "collection_id": sess.active}
        return original(self, sess, name, arguments)
    tools.Tools._checked = checked


@mutant("ON-E2E-001", profile=PROFILE)
def on_fetch_names_another_notebook():
    """fetch_passage's provenance names the collection's next notebook, not the one the passage is in."""
    def next_notebook(body, sess, source_id):
        ids = sorted(_LIBRARY["library"].collections[sess.active].notebooks)
        here = body["provenance"]["notebook_id"]
        body["provenance"]["notebook_id"] = ids[(ids.index(here) + 1) % len(ids)]
        return body
    _keep_library()
    _wrap("_fetch_passage", next_notebook)


@mutant("ON-STRM-013", profile=PROFILE)
def on_chunk_index_per_step():
    """chunk_index counts the chunks of its step (from 0 at each step), not of the stream."""
    def per_step(body, stream):
        if "chunk_index" in body:
            before = stream.chunks[:stream.position - 1]
            body["chunk_index"] = sum(c["chunk_type"] == body["chunk_type"] for c in before)
    _wrap_responses(per_step)


@mutant("ON-SRCH-011", profile=PROFILE)
def on_own_passage_ranked_eleventh():
    """A passage whose text is the query ranks after ten other matches (a "more like this" search:
    the caller has its text), its score lowered to keep the list in order."""
    original = tools.Tools._hits

    def hits(self, cid, query, k):
        found, total = original(self, cid, query, k + 10)
        own = [(p, score) for p, score in found if p.text.strip() == query.strip()]
        others = [(p, score) for p, score in found if p.text.strip() != query.strip()]
        ordered, last = [], None
        for p, score in others[:10] + own + others[10:]:
            last = score if last is None else min(score, last)
            ordered.append((p, last))
        return ordered[:k], total
    tools.Tools._hits = hits


@mutant("ON-SRCH-012", profile=PROFILE)
def on_search_finds_nothing():
    """semantic_search returns no result for any query (and streams reference nothing)."""
    tools.Tools._hits = lambda self, cid, query, k: ([], 0)


@mutant("ON-ART-012", "ON-COLL-007", profile=PROFILE)
def on_listed_artifact_ids_refused():
    """list_artifact_sets names artifact ids retrieve_artifact does not know (a stale export's)."""
    def answer(body, sess):
        for entry in body["artifact_sets"]:
            entry["artifact_ids"] = [f"{wire}-v0" for wire in entry["artifact_ids"]]
        return body
    _wrap("_list_artifact_sets", answer)


# -- answers each allowed, but not the same way throughout (the profile's advisories) ------------------------
# The variant on_variant_mixed_readings takes all of them at once: each call is one the seed allows.
_HALF = set(list(world.TOOLS)[::2])  # describe_world, enter_collection, semantic_search, ...


@mutant("ON-TOOL-005", profile=PROFILE)
def on_tool_metadata_in_two_places():
    """Every other tool declares read-only and reversible in MCP annotations only, the rest in `_meta` only."""
    server.tool_list = lambda: [
        server.types.Tool(name=name, description=description, input_schema=schema, annotations=server.ANNOTATIONS)
        if name in _HALF else
        server.types.Tool(name=name, description=description, input_schema=schema, meta=dict(world.TOOL_METADATA))
        for name, (description, schema) in world.TOOLS.items()]


@mutant("ON-OBS-002", profile=PROFILE)
def on_result_metadata_in_two_places():
    """fetch_passage results carry provenance_available in a `metadata` field; every other result in `_meta`."""
    from mcp_types import methods
    from pydantic import ConfigDict

    class Extended(server.types.CallToolResult):
        model_config = ConfigDict(extra="allow")  # a field MCP does not define, as the seed's sketch has it
    original, sieve = server.to_result, methods.serialize_server_result

    def to_result(outcome):
        result = original(outcome)
        if outcome.is_error or not {"passage", "integrity"} <= set(outcome.body):
            return result
        return Extended(content=result.content, structured_content=result.structured_content,
                        metadata=dict(world.RESULT_METADATA))

    def serialize_server_result(method, version, dumped):
        # The SDK's outbound sieve drops fields MCP does not define; this server sends its `metadata`.
        out = sieve(method, version, dumped)
        return {**out, "metadata": dumped["metadata"]} if method == "tools/call" and "metadata" in dumped else out
    server.to_result = to_result
    methods.serialize_server_result = serialize_server_result


@mutant("ON-SRCH-010", profile=PROFILE)
def on_k_over_max_two_ways():
    """Clamps k up to 99 to 50, and refuses k of 100 or more (ambiguous_request)."""
    _refuse_k_over(99)


def _refuse_k_over(limit: int | None = None) -> None:
    """semantic_search refuses (ambiguous_request) a k over `limit` (default: the configured maximum)."""
    original = tools.Tools._semantic_search

    def search(self, sess, query, k=None):
        if isinstance(k, (int, float)) and not isinstance(k, bool) and \
                k > (self.config.max_search_results if limit is None else limit):
            raise errors.ambiguous("k_over_max", "k")
        return original(self, sess, query, k)
    tools.Tools._semantic_search = search


@mutant("ON-PASS-010", profile=PROFILE)
def on_checksum_coverage_two_ways():
    """A passage of odd length is checksummed with its context, one of even length alone."""
    import hashlib

    def coverage(body, sess, source_id):
        passage = body["passage"]
        if len(passage["exact_text"]) % 2:
            whole = passage["context_before"] + passage["exact_text"] + passage["context_after"]
            body["integrity"]["checksum"] = hashlib.sha256(whole.encode()).hexdigest()
            body["integrity"]["covers"] = "context_before + exact_text + context_after (UTF-8 bytes)"
        return body
    _wrap("_fetch_passage", coverage)


@mutant("ON-ART-011", profile=PROFILE)
def on_tamper_reported_two_ways():
    """A changed JSON artifact is served with verified false; a changed Markdown one is refused."""
    _changed_served_unverified(refuse_markdown=True)


# The reference's own declaration (k_over_max clamp, tamper_report error, ...), for the mutants
# that take one way throughout, but not the declared one.
_DECLARED = ("--declare", str(Path(__file__).resolve().parents[2] / "reference" / "open_notebook" / "declaration.yaml"))


@mutant("ON-SRCH-003", "ON-SRCH-010", profile=PROFILE, options=_DECLARED)
def on_k_over_max_refused_though_clamp_declared():
    """Declares k_over_max clamp, but refuses every k over 50 (ambiguous_request): one way, not the declared one."""
    _refuse_k_over()


@mutant("ON-ART-007", "ON-ART-011", profile=PROFILE, options=_DECLARED)
def on_tamper_unverified_though_error_declared():
    """Declares tamper_report error, but serves every changed artifact with verified false."""
    _changed_served_unverified(refuse_markdown=False)


@mutant("ON-TOOL-003", "ON-TOOL-005", profile=PROFILE, options=_DECLARED)
def on_tool_metadata_annotations_though_meta_declared():
    """Declares tool_metadata _meta, but every tool declares read-only and reversible in annotations only."""
    server.tool_list = lambda: [server.types.Tool(name=name, description=description, input_schema=schema,
                                                  annotations=server.ANNOTATIONS)
                                for name, (description, schema) in world.TOOLS.items()]


@mutant("ON-PASS-004", "ON-PASS-010", profile=PROFILE, options=_DECLARED)
def on_checksum_with_context_though_exact_text_declared():
    """Declares passage_checksum exact_text, but every passage's checksum covers it with its context."""
    _wrap("_fetch_passage", _checksum_with_context)


def _changed_served_unverified(*, refuse_markdown: bool) -> None:
    """retrieve_artifact serves a changed artifact with verified false (a Markdown one refused, if asked)."""
    original = tools.Tools._retrieve_artifact

    def retrieve(self, sess, artifact_id):
        lib = self.library
        artifact = lib.artifact(sess.active, artifact_id)
        data = (lib.root / artifact.rel_path).read_bytes()
        intact = artifact.intact_at_start and layout.sha256_hex(data) == artifact.sha256
        if intact or refuse_markdown and artifact.media_type == "text/markdown":
            return original(self, sess, artifact_id)  # refuses a changed Markdown artifact

        class Unchecked:
            def __getattr__(self, name):
                return getattr(lib, name)

            def read_artifact(self, _artifact):
                try:
                    return layout.contents_of(artifact, data)
                except layout.LayoutError:  # the change broke the JSON: its text, as `string | object` allows
                    return layout.decode_text(data, artifact.rel_path)
        self.library = Unchecked()
        try:
            body = original(self, sess, artifact_id)
        finally:
            self.library = lib
        body["integrity"]["verified"] = False
        return body
    tools.Tools._retrieve_artifact = retrieve


@mutant("ON-TOOL-006", profile=PROFILE)
def on_optional_filter_declared():
    """list_collections declares (and honours) an optional domain_tag filter the seed does not have."""
    description, schema = world.TOOLS["list_collections"]
    schema = json.loads(json.dumps(schema))  # the seed's argument-free tools share one schema object
    schema["properties"]["domain_tag"] = {"type": "string", "description": "Only collections with this domain tag"}
    world.TOOLS["list_collections"] = (description, schema)
    tools._VALIDATORS["list_collections"] = tools.Draft202012Validator(schema)
    original = tools.Tools._list_collections

    def list_collections(self, sess, domain_tag=None):
        body = original(self, sess)
        if domain_tag is not None:
            body["collections"] = [c for c in body["collections"] if domain_tag in c["domain_tags"]]
            body["metadata"]["total_collections"] = len(body["collections"])
        return body
    tools.Tools._list_collections = list_collections


# -- a server of fixed mock records (as a public Open Notebook MCP server is) ------------------------------
_MOCK_REF, _MOCK_ART, _MOCK_TOKEN = "mock-ref-1", "mock-artifact-1", "mock-stream-00000000000000000000000000000"
_MOCK_POINTER = {"notebook_id": "mock-notebook", "page": 1, "timestamp": 1700000000}
_MOCK_PROVENANCE = {"source_notebooks": ["mock-notebook"], "transformation_steps": [
    {"step_order": 1, "tool": "mock-export", "timestamp": 1700000000, "parameters": {}}],
    "created_at": 1700000000, "created_by": "human_export"}


def _mock_body(tool: str, tools_obj, sess) -> dict:
    """The one record each tool always answers, whatever the ids, queries and collection."""
    if tool == "describe_world":
        return world.describe_world()
    if tool == "list_constraints":
        return world.list_constraints(tools_obj.config.limits())
    return {
        "list_collections": {"collections": [{
            "collection_id": "mock-collection", "title": "Mock notebooks", "date_range": {"start": "2024-01-01",
            "end": "2024-12-31"}, "domain_tags": ["mock"], "artifact_count": 1, "notebook_count": 1,
            "last_modified": 1700000000}], "metadata": {"total_collections": 1, "data_as_of": 1700000000,
                                                         "next_refresh": None}},
        "list_artifact_sets": {"collection_id": "mock-collection", "artifact_sets": [{
            "artifact_set_id": "mock-set", "artifact_type": "summary", "created_at": 1700000000, "status": "canonical",
            "source_notebooks": ["mock-notebook"], "artifact_count": 1, "artifact_ids": [_MOCK_ART]}]},
        "semantic_search": {"collection_id": "mock-collection", "query": "mock", "results": [{
            "reference_id": _MOCK_REF, "relevance_score": 0.9, "source_pointer": dict(_MOCK_POINTER),
            "preview_snippet": "A mock passage."}], "metadata": {"total_matches": 1, "returned": 1,
                                                                 "search_time_ms": 1}, "note": world.SEARCH_NOTE},
        "fetch_passage": {"source_id": _MOCK_REF, "passage": {"exact_text": "A mock passage.", "context_before": "",
            "context_after": ""}, "provenance": {"notebook_id": "mock-notebook", "notebook_title": "Mock",
            "page": 1, "timestamp": 1700000000, "export_method": "mock", "last_verified": 1700000000},
            "integrity": {"checksum": "0" * 64, "verified": True}, "disclaimer": world.PASSAGE_DISCLAIMER},
        "retrieve_artifact": {"artifact_id": _MOCK_ART, "artifact_type": "summary", "status": "canonical",
            "contents": "A mock artifact.", "provenance": dict(_MOCK_PROVENANCE), "synthesis_metadata": {
                "synthesized": False, "confidence_note": "mock", "last_refreshed": None,
                "staleness_indicator": "unknown"}, "disclaimer": world.ARTIFACT_DISCLAIMER, "immutable": True},
        "begin_result_stream": {"stream_token": _MOCK_TOKEN, "query": "mock", "disclosure_policy": {
            "step_order": list(world.STEP_ORDER), "chunk_strategy": world.CHUNK_STRATEGY, "cancelable": True,
            "timeout_s": tools_obj.config.stream_timeout_s}, "metadata": {"estimated_chunks": 1,
            "created_at": 1700000000}, "note": world.STREAM_NOTE},
        "next_stream_chunk": {"stream_token": _MOCK_TOKEN, "chunk_type": "stream_complete", "summary": {
            "total_chunks": 0, "total_references": 0, "query": "mock"}, "continuation": {"has_more": False,
                                                                                        "stream_closed": True}},
        "explain_provenance": {"id": _MOCK_REF, "id_type": "source", "provenance": {"origin_notebook": {
            "notebook_id": "mock-notebook", "title": "Mock", "author": None, "created_at": 1700000000},
            "transformation_steps": [], "tools_involved": [], "confidence_notes": []},
            "interpretation_note": world.INTERPRETATION_NOTE},
    }[tool]


@mutant("ON-COLL-001", profile=PROFILE)
def on_mock_data():
    """Offers the eleven tools but serves fixed mock records, ignoring ids, queries and {notebooks}:
    only its own mock collection can be entered (tests/test_open_notebook_mock.py runs the whole suite on it)."""
    def checked(self, sess, name, arguments):
        if name not in world.TOOLS:
            raise refusals.unknown_tool(name, list(world.TOOL_NAMES))
        if name == "enter_collection" and (arguments or {}).get("collection_id") != "mock-collection":
            raise errors.collection_not_found(None)
        if name == "enter_collection":
            return {"collection_id": "mock-collection", "title": "Mock notebooks", "context_established": True,
                    "scope_note": world.SCOPE_NOTE, "available_operations": list(world.AVAILABLE_OPERATIONS),
                    "preload_note": world.PRELOAD_NOTE}
        return _mock_body(name, self, sess)
    tools.Tools._checked = checked


# -- a reference to the loaded library, for patches that need it -------------------------------------
_LIBRARY: dict[str, library.Library] = {}


def _keep_library() -> None:
    original = library.Library.__init__

    def init(self, root):
        original(self, root)
        _LIBRARY["library"] = self
    library.Library.__init__ = init


# -- a correct variant ----------------------------------------------------------------------------------
@variant(profile=PROFILE)
def on_variant_other_choices():
    """Not a defect: every choice seed 004 leaves open, taken the other way.

    - errors as JSON-RPC errors whose data is the envelope (not isError results);
    - semantic_search with k over 50 fails (ambiguous_request) instead of clamping;
    - tools declare read-only and reversible in MCP annotations only (no `_meta`);
    - the passage checksum covers the passage with its context;
    - an artifact changed after start-up is served with verified false, not refused;
    - list_artifact_sets names artifacts under `artifacts` as objects;
    - stream tokens are UUIDs and chunk_index starts at 1;
    - an unknown tool is refused at the protocol level (invalid params), not in the taxonomy.
    """
    import uuid

    from mcp.shared.exceptions import MCPError

    original_result = server.to_result

    def to_result(outcome):
        if outcome.is_error:
            raise MCPError(-32010, outcome.body["error"]["message"], outcome.body)
        return original_result(outcome)
    server.to_result = to_result
    server.tool_list = lambda: [server.types.Tool(name=name, description=description, input_schema=schema,
                                                  annotations=server.ANNOTATIONS)
                                for name, (description, schema) in world.TOOLS.items()]

    _refuse_k_over()

    _wrap("_fetch_passage", _checksum_with_context)

    def read_artifact(self, artifact):
        data = (self.root / artifact.rel_path).read_bytes()
        return layout.contents_of(artifact, data), artifact.intact_at_start and layout.sha256_hex(data) == artifact.sha256
    library.Library.read_artifact = read_artifact
    original_retrieve = tools.Tools._retrieve_artifact

    def retrieve(self, sess, artifact_id):
        lib = self.library

        class Reader:
            def __getattr__(self, name):
                return getattr(lib, name)

            def read_artifact(self, artifact):
                return read_artifact(lib, artifact)[0]
        self.library = Reader()
        try:
            body = original_retrieve(self, sess, artifact_id)
        finally:
            self.library = lib
        verified = read_artifact(lib, lib.artifact(sess.active, artifact_id))[1]
        body["integrity"]["verified"] = verified
        return body
    tools.Tools._retrieve_artifact = retrieve

    def as_objects(body, sess):
        for entry in body["artifact_sets"]:
            entry["artifacts"] = [{"artifact_id": a} for a in entry.pop("artifact_ids")]
        return body
    _wrap("_list_artifact_sets", as_objects)

    class Uuids:
        def token_urlsafe(self, _size):
            return str(uuid.uuid4())
    tools.secrets = Uuids()
    original_next = streams.next_response

    def next_response(stream):
        body, closed = original_next(stream)
        if "chunk_index" in body:
            body["chunk_index"] += 1
        return body, closed
    streams.next_response = next_response
    tools.streams = streams

    original_call = tools.Tools.call

    def call(self, sess, name, arguments):
        if name not in world.TOOLS:
            raise MCPError(-32602, f"Unknown tool: {name}")
        return original_call(self, sess, name, arguments)
    tools.Tools.call = call


@variant(profile=PROFILE)
def on_variant_seed_sketch():
    """Not a defect: the seed's own sketch where it leaves the form open.

    - errors as plain results whose JSON is the envelope (the seed's Tool Execution returns
      executeToolSafely's result so), not isError results; unknown tools at the protocol level;
    - the passage checksum as `sha256:<HEX>` (the seed fixes the algorithm, not the encoding);
    - semantic_search returns at most 40 results (k is a maximum, not a count);
    - every undeclared argument, a mutation attempt included, is rejected by the schema as
      ambiguous_request before any intent is read.
    """
    from mcp.shared.exceptions import MCPError

    def to_result(outcome):
        content = [server.types.TextContent(type="text", text=json.dumps(outcome.body, ensure_ascii=False))]
        return server.types.CallToolResult(content=content, meta=dict(world.RESULT_METADATA))
    server.to_result = to_result
    original_call = tools.Tools.call

    def call(self, sess, name, arguments):
        if name not in world.TOOLS:
            raise MCPError(-32602, f"Unknown tool: {name}")
        return original_call(self, sess, name, arguments)
    tools.Tools.call = call

    def prefixed(body, sess, source_id):
        body["integrity"]["checksum"] = "sha256:" + body["integrity"]["checksum"].upper()
        return body
    _wrap("_fetch_passage", prefixed)
    original_hits = tools.Tools._hits

    def hits(self, cid, query, k):
        found, total = original_hits(self, cid, query, k)
        return found[:40], total
    tools.Tools._hits = hits
    refusals.undeclared_arguments = lambda extra: errors.ambiguous("undeclared_argument")


@variant(profile=PROFILE)
def on_variant_vector_cache():
    """Not a defect: keeps a vector cache in HOME (the seed's `persistence: "external only
    (artifacts, vectors)"`), written on the first search after start-up. Passes the default run;
    that nothing at all is written is the profile's advisory ON-RO-002, so --strict reports it."""
    original = tools.Tools._semantic_search

    def search(self, sess, query, k=None):
        cache = Path(os.environ.get("HOME", ".")) / ".cache" / "rc-open-notebook" / "vectors.bin"
        if not cache.exists():
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_bytes(b"\0" * 64)  # a stand-in for persisted embeddings: never notebook text
        return original(self, sess, query, k)
    tools.Tools._semantic_search = search


@variant(profile=PROFILE)
def on_variant_mixed_readings():
    """Not a defect: where the seed allows several answers, a different allowed answer for
    different tools and calls (the profile's one-way-throughout readings are advisories).

    - tools declare read-only and reversible in annotations or in `_meta`, half each;
    - fetch_passage results carry provenance_available in `metadata`, the others in `_meta`;
    - k from 51 to 99 is clamped, k of 100 or more refused;
    - a passage's checksum covers exact_text or the passage with its context, by its length;
    - a changed JSON artifact is served with verified false, a changed Markdown one refused;
    - list_collections declares an optional domain_tag property beyond the seed's schema.
    Passes the default run; under --strict ON-TOOL-005, ON-OBS-002, ON-SRCH-010, ON-PASS-010,
    ON-ART-011 and ON-TOOL-006 are reported (advisories), so the strict run fails.
    """
    for patch in (on_tool_metadata_in_two_places, on_result_metadata_in_two_places, on_k_over_max_two_ways,
                  on_checksum_coverage_two_ways, on_tamper_reported_two_ways, on_optional_filter_declared):
        patch()


@variant(profile=PROFILE)
def on_variant_loose_echoes():
    """Not a defect: where seed 004's words leave the form open, the answers the reference does not give.

    - chunk_index counts the chunks of its step, from 0 at each step (the seed: `chunk_index: number`);
    - semantic_search, begin_result_stream and the completion summary echo the query trimmed;
    - a passage whose text is the query ranks after ten other matches (the seed promises no recall);
    - the open lists hold more than the seed's entries, in another order: describe_world's
      purpose adds the seed's fourth (World Seal), enter_collection's available_operations adds
      explain_provenance.
    Passes the default run; under --strict ON-STRM-013 and ON-SRCH-011 are reported (advisories).
    """
    on_chunk_index_per_step()
    on_own_passage_ranked_eleventh()
    original_world = world.describe_world

    def describe_world():
        body = original_world()
        body["purpose"] = [*reversed(body["purpose"]), "support downstream reasoning only through explicit contracts"]
        return body
    world.describe_world = describe_world

    def more_operations(body, sess, collection_id):
        body["available_operations"] = ["explain_provenance", *reversed(body["available_operations"])]
        return body
    _wrap("_enter_collection", more_operations)

    def trimmed(body, sess, query, k=None):
        body["query"] = query.strip()
        return body
    _wrap("_semantic_search", trimmed)
    _wrap("_begin_result_stream", trimmed)
    _wrap_responses(lambda body, stream: "summary" in body and body["summary"].update(query=stream.query.strip()))


@variant(profile=PROFILE)
def on_variant_seed_artifact_listing():
    """Not a defect: list_artifact_sets in the seed's own shape (each set's artifact_set_id,
    artifact_type, created_at, status, source_notebooks and artifact_count, and no artifact ids):
    retrieve_artifact and explain_provenance take a set's artifact_set_id, the one identifier
    the seed's listing gives, for the set's first artifact (and still the artifacts' own ids).
    Passes the default run; under --strict ON-COLL-007 is reported (an advisory)."""
    def seed_shape(body, sess):
        for entry in body["artifact_sets"]:
            entry.pop("artifact_ids")
        return body
    _wrap("_list_artifact_sets", seed_shape)
    original = library.Library.artifact

    def artifact(self, active, requested):
        artifact_set = self.collections[active].artifact_sets.get(requested) if active else None
        if artifact_set is not None and artifact_set.artifacts:
            return next(iter(artifact_set.artifacts.values()))
        return original(self, active, requested)
    library.Library.artifact = artifact


if __name__ == "__main__":
    sys.exit(run("launch_open_notebook.py", server.main))
