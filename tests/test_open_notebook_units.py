"""The open-notebook reference piece by piece, in process: the layout reader's rules, the
embedding, previews, refusal words, configuration, and the order in which a call is checked."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from contract_tests.synthetic import notebook_generator as fixture
from reference.open_notebook import embedding, errors, layout, refusals, world
from reference.open_notebook.config import Config, ConfigError, load_config, parse_args
from reference.open_notebook.library import Library, preview
from reference.open_notebook.session import Session
from reference.open_notebook.tools import Tools

FRONT = """---
notebook_id: nb-1
title: Secret title words
author: null
created_at: 10
modified_at: 20
export_method: markdown-export
exported_at: 30
pages:
- page: 1
  timestamp: 100
- page: 2
  timestamp: null
---
"""


def parse(body: str, front: str = FRONT):
    return layout.parse_notebook(front + body, "nb-1", "c/notebooks/nb-1.md")


# -- layout ------------------------------------------------------------------------------------
def test_passages_are_the_top_level_blocks_of_each_page_verbatim():
    body = ("\n<!-- page 1 -->\n\n# Heading\n\nLine one\nline two  \n\n- a\n- b\n\n---\n\n"
            "<!-- page 2 -->\n```\nx\n\n<!-- page 9 -->\n```\n\n> quote\n")
    front, pages, passages = parse(body)
    assert [(p.page, p.ordinal, p.text) for p in passages] == [
        (1, 1, "# Heading"), (1, 2, "Line one\nline two"), (1, 3, "- a\n- b"),
        (2, 1, "```\nx\n\n<!-- page 9 -->\n```"), (2, 2, "> quote")]
    text = FRONT + body
    for passage in passages:
        assert text[passage.start:passage.end] == passage.text
    assert [(p.number, p.timestamp) for p in pages] == [(1, 100), (2, None)]
    assert text[pages[0].start:pages[0].end].startswith("\n# Heading")
    assert pages[0].end == text.index("<!-- page 2 -->")
    assert pages[1].end == len(text)


@pytest.mark.parametrize("body,reason", [
    ("Intro\n\n<!-- page 1 -->\n\nx\n\n<!-- page 2 -->\n", "before the first page marker"),
    ("<!-- page 1 -->\n\nx\n", "page markers"),
    ("<!-- page 2 -->\n\n<!-- page 1 -->\n", "page markers"),
])
def test_page_structure_errors_are_layout_errors(body, reason):
    with pytest.raises(layout.LayoutError, match=reason):
        parse(body)


def test_a_schema_error_names_the_field_but_never_the_value():
    with pytest.raises(layout.LayoutError) as info:
        parse("<!-- page 1 -->\n", FRONT.replace("author: null", "author: [Secret author words]"))
    assert "$.author" in str(info.value) and "Secret" not in str(info.value)


@pytest.mark.parametrize("data,reason", [(b"\xef\xbb\xbf---\n", "byte order mark"), (b"---\r\n", "CR"),
                                         (b"\xff", "UTF-8")])
def test_notebook_bytes_must_be_plain_utf8_with_lf(data, reason):
    with pytest.raises(layout.LayoutError, match=reason):
        layout.decode_text(data, "x.md")


def test_a_symbolic_link_in_the_layout_is_refused(tmp_path):
    built = fixture.build(tmp_path / "r", seed=0, collections=1)
    notebook = built.root / built.collections["coastal-survey"].notebook_paths[0]
    os.symlink(notebook, notebook.parent / "nb-9999.md")
    with pytest.raises(layout.LayoutError, match="symbolic link"):
        layout.load_root(built.root)


def test_an_artifact_naming_a_notebook_outside_its_collection_is_refused(tmp_path):
    built = fixture.build(tmp_path / "r", seed=0, collections=1)
    (built.root / "coastal-survey" / "notebooks" / "nb-0003.md").unlink()
    with pytest.raises(layout.LayoutError, match="source notebook"):
        layout.load_root(built.root)


def test_an_artifact_already_tampered_at_start_up_is_marked_and_never_served(tmp_path):
    built = fixture.build(tmp_path / "r", seed=0, collections=1)
    target = built.collections["coastal-survey"].artifacts[1]
    (built.root / target.contents_path).write_text("forged", encoding="utf-8")
    library = Library(built.root)
    assert library.counts()["artifacts_failing_checksum"] == 1
    tools = Tools(library, Config(built.root))
    session = Session()
    tools.call(session, "enter_collection", {"collection_id": "coastal-survey"})
    outcome = tools.call(session, "retrieve_artifact", {"artifact_id": target.artifact_id})
    assert outcome.error_type == "upstream_failure"
    assert outcome.body["error"]["context"]["verified"] is False


# -- embedding and previews -------------------------------------------------------------------
def test_tokens_are_nfkc_casefolded_word_runs():
    assert embedding.tokens("Straße ﬁeld KELP-pool 潮だまり") == ["strasse", "field", "kelp", "pool", "潮だまり"]


def test_the_index_ranks_deterministically_and_only_shared_words_match():
    texts = ["kelp tide pool", "orchard apple", "kelp kelp anemone", "tide"]
    first, second = embedding.Index(texts), embedding.Index(texts)
    assert first.search("kelp tide", 10) == second.search("kelp tide", 10)
    hits, total = first.search("kelp tide", 10)
    assert [h.index for h in hits] == [0, 3, 2] and total == 3  # "tide" alone is nearer than "kelp kelp anemone"
    assert all(0 < h.score <= 1 for h in hits)
    assert first.search("quince", 10) == ([], 0)
    assert first.search("kelp tide pool", 10)[0][0].score == 1.0
    assert first.search("kelp tide", 1) == (hits[:1], 3)


def test_ties_go_to_the_earlier_passage_even_at_the_cut():
    index = embedding.Index(["other words", "same words", "same words", "same words"])
    hits, total = index.search("same", 2)
    assert [h.index for h in hits] == [1, 2] and total == 3


def test_notebooks_are_ordered_by_id_not_by_file_name(tmp_path):
    built = fixture.build(tmp_path / "r", seed=0, collections=1)
    notebooks = built.root / "coastal-survey" / "notebooks"
    for old, new in (("nb-0004", "a"), ("nb-0005", "a-b")):  # 'a-b.md' sorts before 'a.md'
        text = (notebooks / f"{old}.md").read_text().replace(f"notebook_id: {old}", f"notebook_id: {new}")
        (notebooks / f"{new}.md").write_text(text)
        (notebooks / f"{old}.md").unlink()
    for artifact_set in (built.root / "coastal-survey" / "artifacts").iterdir():
        manifest = artifact_set / "set.json"
        manifest.write_text(manifest.read_text().replace('"nb-0004"', '"a"').replace('"nb-0005"', '"a-b"'))
    assert list(layout.load_root(built.root)["coastal-survey"].notebooks)[:2] == ["a", "a-b"]


@pytest.mark.parametrize("length", [1, 2, 10, 99, 100, 101, 199, 200, 1000])
def test_a_preview_is_a_short_prefix_never_the_full_text(length):
    text = ("word " * 400)[:length]
    snippet = preview(text, world.PREVIEW_MAX_CHARS)
    assert len(snippet) <= 100 and snippet.endswith("\u2026")
    assert text.startswith(snippet[:-1]) and snippet[:-1] != text


# -- refusals ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name,condition", [
    ("write_notebook", "requests for mutation"), ("deleteNotebook", "requests for mutation"),
    ("update-vectors", "requests for mutation"), ("save_memory", "requests for memory persistence"),
    ("summarize_collection", "requests for reasoning"), ("decide", "requests for decision-making"),
    ("run_workflow", "requests for external tool invocation"),
])
def test_write_like_tool_names_are_refused_as_forbidden_with_their_condition(name, condition):
    body = refusals.unknown_tool(name, list(world.TOOL_NAMES)).body()["error"]
    assert body["type"] == "operation_forbidden"
    assert body["context"]["refusal_condition"] == condition
    assert condition in world.REFUSAL_CONDITIONS
    assert name not in body["message"]


def test_an_unknown_tool_without_a_forbidden_word_is_refused_too():
    body = refusals.unknown_tool("frobnicate", list(world.TOOL_NAMES)).body()["error"]
    assert body["type"] == "operation_forbidden"
    assert body["context"]["prohibition"] == "expanding affordances dynamically"
    assert body["context"]["available_affordances"] == list(world.TOOL_NAMES)


def test_the_error_taxonomy_is_closed():
    with pytest.raises(ValueError):
        errors.ToolError("not_a_type", "x")
    assert len(errors.ERROR_TYPES) == 10


# -- the order of checks ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def tools(tmp_path_factory) -> Tools:
    root = tmp_path_factory.mktemp("units") / "r"
    fixture.build(root, seed=0, collections=2)
    return Tools(Library(root), Config(root))


def test_a_refusal_comes_before_the_missing_context(tools):
    outcome = tools.call(Session(), "semantic_search", {"query": "kelp", "mode": "write"})
    assert outcome.error_type == "operation_forbidden"


def test_the_missing_context_comes_before_argument_checks(tools):
    assert tools.call(Session(), "semantic_search", {}).error_type == "no_collection_context"


def test_invalid_arguments_are_ambiguous_requests_naming_the_argument(tools):
    session = Session()
    tools.call(session, "enter_collection", {"collection_id": "coastal-survey"})
    for arguments, reason, argument in [({}, "missing_argument", "query"),
                                        ({"query": 3}, "invalid_argument", "query"),
                                        ({"query": "kelp", "k": "3"}, "invalid_argument", "k"),
                                        ({"query": "kelp", "k": 0}, "k_must_be_a_positive_whole_number", "k"),
                                        ({"query": "kelp", "k": 2.5}, "k_must_be_a_positive_whole_number", "k"),
                                        ({"query": "  "}, "empty_query", "query"),
                                        ({"query": "?!"}, "no_searchable_terms", "query")]:
        outcome = tools.call(session, "semantic_search", arguments)
        assert outcome.error_type == "ambiguous_request", arguments
        assert outcome.body["error"]["context"] == {"reason": reason, "argument": argument}
    assert tools.call(session, "semantic_search", "kelp").error_type == "ambiguous_request"


def test_a_sessionless_request_cannot_enter_a_collection(tools):
    outcome = tools.call(Session(has_session=False), "enter_collection", {"collection_id": "coastal-survey"})
    assert outcome.error_type == "operation_forbidden"


def test_a_failed_enter_keeps_the_current_context(tools):
    session = Session()
    tools.call(session, "enter_collection", {"collection_id": "coastal-survey"})
    outcome = tools.call(session, "enter_collection", {"collection_id": "nope"})
    assert outcome.error_type == "collection_not_found"
    assert outcome.body["error"]["context"] == {"active_collection": "coastal-survey"}
    assert session.active == "coastal-survey"


# -- configuration ----------------------------------------------------------------------------
@pytest.mark.parametrize("flags", [["--passage-context", "501"], ["--passage-context", "-1"],
                                   ["--max-search-results", "51"], ["--max-search-results", "0"],
                                   ["--stream-timeout", "0"], ["--stream-chunk-size", "0"]])
def test_out_of_range_flags_are_config_errors(tmp_path, flags):
    with pytest.raises(ConfigError):
        load_config(parse_args(["--notebooks", str(tmp_path), *flags]))


def test_the_server_refuses_to_start_on_a_bad_root_and_says_why_without_paths(tmp_path):
    built = fixture.build(tmp_path / "r", seed=0, collections=1)
    (built.root / "coastal-survey" / "collection.json").write_text('{"title": "Secret words"}')
    for root, expected in [(tmp_path / "missing", "not a directory"), (built.root, "layout error")]:
        proc = subprocess.run([sys.executable, "-m", "reference.open_notebook", "--notebooks", str(root)],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert proc.returncode == 2 and expected in proc.stderr
        assert "Traceback" not in proc.stderr and str(tmp_path) not in proc.stderr and proc.stdout == ""
        assert "Secret" not in proc.stderr


def test_an_internal_error_answers_in_the_taxonomy_without_details(tools, monkeypatch, caplog):
    session = Session()
    tools.call(session, "enter_collection", {"collection_id": "coastal-survey"})

    def broken(*args, **kwargs):
        raise KeyError("Secret notebook words")

    monkeypatch.setattr(tools.library.indexes["coastal-survey"], "search", broken)
    outcome = tools.call(session, "semantic_search", {"query": "kelp"})
    assert outcome.error_type == "upstream_failure"
    assert "Secret" not in str(outcome.body) and "Secret" not in caplog.text
