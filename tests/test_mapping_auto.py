"""`--mapping auto` (contract_tests/contracts/mapping_auto.py) on synthetic tools/list fixtures.

The fixtures are written from the research tables (notes on each server's tools, argument names
and descriptions), not copied from the servers; descriptions are paraphrased and shortened."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from contract_tests.contracts.mapping_auto import propose, render

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "mapping.schema.json").read_text())
SERVER = {"cmd": "example-server {root}"}
S = {"type": "string"}
RO = {"readOnlyHint": True}
RW = {"readOnlyHint": False, "destructiveHint": True}


def tool(name, description, properties=None, required=(), annotations=None):
    schema = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = list(required)
    return {"name": name, "description": description, "inputSchema": schema,
            **({"annotations": annotations} if annotations else {})}


def strings(description=""):
    return {"type": "array", "items": {"type": "string"}, "description": description}


def s(description):
    return {"type": "string", "description": description}


OFFICIAL_FS = [
    tool("read_file", "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.",
         {"path": S, "tail": {"type": "number"}, "head": {"type": "number"}}, ["path"], RO),
    tool("read_text_file", "Read the complete contents of a file from the file system as text. "
         "Only works within allowed directories.",
         {"path": S, "tail": {"type": "number", "description": "last N lines"},
          "head": {"type": "number", "description": "first N lines"}}, ["path"], RO),
    tool("read_media_file", "Read an image or audio file and return it base64-encoded with its MIME type.",
         {"path": S}, ["path"], RO),
    tool("read_multiple_files", "Read the contents of multiple files simultaneously. Failed reads for "
         "individual files won't stop the entire operation.",
         {"paths": {"type": "array", "items": S, "minItems": 1}}, ["paths"], RO),
    tool("write_file", "Create a new file or completely overwrite an existing file.",
         {"path": S, "content": S}, ["path", "content"], {"readOnlyHint": False, "idempotentHint": True}),
    tool("edit_file", "Make line-based edits to a text file. Returns a git-style diff.",
         {"path": S, "edits": {"type": "array", "items": {"type": "object", "properties": {
             "oldText": S, "newText": S}}}, "dryRun": {"type": "boolean", "default": False}},
         ["path", "edits"], RW),
    tool("create_directory", "Create a new directory or ensure a directory exists.", {"path": S}, ["path"],
         {"readOnlyHint": False, "destructiveHint": False}),
    tool("list_directory", "Get a detailed listing of all files and directories in a specified path, "
         "with [FILE] and [DIR] prefixes.", {"path": S}, ["path"], RO),
    tool("list_directory_with_sizes", "Get a detailed listing of all files and directories in a specified "
         "path, including sizes.", {"path": S, "sortBy": {"enum": ["name", "size"], "default": "name"}},
         ["path"], RO),
    tool("directory_tree", "Get a recursive tree view of files and directories as a JSON structure.",
         {"path": S, "excludePatterns": strings()}, ["path"], RO),
    tool("move_file", "Move or rename files and directories. Both source and destination must be within "
         "allowed directories.", {"source": S, "destination": S}, ["source", "destination"], RW),
    tool("search_files", "Recursively search for files and directories matching a pattern. Returns full "
         "paths to all matching items.", {"path": S, "pattern": S, "excludePatterns": strings()},
         ["path", "pattern"], RO),
    tool("get_file_info", "Retrieve detailed metadata about a file or directory: size, creation time, last "
         "modified time, permissions and type.", {"path": S}, ["path"], RO),
    tool("list_allowed_directories", "Returns the list of directories that this server is allowed to access.",
         {}, (), RO),
]

MARKUS_OBSIDIAN = [
    tool("obsidian_list_files_in_vault", "Lists all files and directories in the root directory of your "
         "Obsidian vault."),
    tool("obsidian_list_files_in_dir", "Lists all files and directories that exist in a specific Obsidian "
         "directory.", {"dirpath": s("Path to list files from (relative to your vault root). Note that empty "
                                     "directories will not be returned.")}, ["dirpath"]),
    tool("obsidian_get_file_contents", "Return the content of a single file in your vault.",
         {"filepath": s("Path to the relevant file (relative to your vault root).")}, ["filepath"]),
    tool("obsidian_batch_get_file_contents", "Return the contents of multiple files in your vault, "
         "concatenated with headers.", {"filepaths": strings("List of file paths to read")}, ["filepaths"]),
    tool("obsidian_simple_search", "Simple search for documents matching a specified text query across all "
         "files in the vault.", {"query": s("Text to search for in the vault."),
                                 "context_length": {"type": "integer", "default": 100}}, ["query"]),
    tool("obsidian_complex_search", "Complex search for documents using a JsonLogic query.",
         {"query": {"type": "object", "description": "JsonLogic query object"}}, ["query"]),
    tool("obsidian_search_by_tag", "Find notes carrying a tag.", {"tag": S, "dirpath": S}, ["tag"]),
    tool("obsidian_get_frontmatter", "Get the frontmatter of a note.",
         {"filepath": s("Path to the file (relative to your vault root).")}, ["filepath"]),
    tool("obsidian_get_periodic_note", "Get current periodic note for the specified period.",
         {"period": {"enum": ["daily", "weekly", "monthly"]}, "type": {"enum": ["content", "metadata"]}},
         ["period"]),
    tool("obsidian_get_recent_periodic_notes", "Get most recent periodic notes for the specified period.",
         {"period": {"enum": ["daily", "weekly"]}, "limit": {"type": "integer"},
          "include_content": {"type": "boolean"}}, ["period"]),
    tool("obsidian_get_recent_changes", "Get recently modified files in the vault.",
         {"limit": {"type": "integer"}, "days": {"type": "integer"}}),
    tool("obsidian_append_content", "Append content to a new or existing file in the vault.",
         {"filepath": S, "content": S}, ["filepath", "content"]),
    tool("obsidian_patch_content", "Insert content into an existing note relative to a heading, block "
         "reference, or frontmatter field.", {"filepath": S, "operation": {"enum": ["append", "prepend",
                                              "replace"]}, "target_type": S, "target": S, "content": S},
         ["filepath", "operation", "target_type", "target", "content"]),
    tool("obsidian_put_content", "Create a new file in your vault or update the content of an existing one.",
         {"filepath": S, "content": S}, ["filepath", "content"]),
    tool("obsidian_delete_file", "Delete a file or directory from the vault.",
         {"filepath": S, "confirm": {"type": "boolean"}}, ["filepath", "confirm"]),
]

CYANHEADS_TARGET = {"anyOf": [
    {"type": "object", "properties": {"type": {"const": "path"}, "path": s("Vault-relative path to the note")},
     "required": ["type", "path"]},
    {"type": "object", "properties": {"type": {"const": "active"}}, "required": ["type"]},
    {"type": "object", "properties": {"type": {"const": "periodic"}, "period": {"enum": ["daily", "weekly"]}},
     "required": ["type", "period"]},
]}
CYANHEADS_OBSIDIAN = [
    tool("obsidian_get_note", "Read a note from the vault: by path, the active note, or a periodic note.",
         {"format": {"enum": ["content", "full", "document-map"]}, "target": CYANHEADS_TARGET,
          "section": S}, ["format", "target"], RO),
    tool("obsidian_list_notes", "List notes and folders under a directory.",
         {"path": s("Vault-relative directory path. Omit for the vault root."), "depth": {"type": "integer"},
          "extension": S, "nameRegex": S}, (), RO),
    tool("obsidian_search_notes", "Search notes by text, Dataview query or JsonLogic.",
         {"mode": {"enum": ["text", "dataview", "jsonlogic"]}, "query": S,
          "pathPrefix": s("Vault-relative folder prefix to limit the search")}, ["mode", "query"], RO),
    tool("obsidian_list_tags", "List all tags in the vault with their counts.", {}, (), RO),
    tool("obsidian_write_note", "Create or overwrite a note.", {"path": S, "content": S}, ["path", "content"], RW),
    tool("obsidian_append_to_note", "Append text to a note.", {"path": S, "content": S}, ["path", "content"], RW),
    tool("obsidian_patch_note", "Patch a section of a note.", {"path": S, "content": S}, ["path", "content"], RW),
    tool("obsidian_replace_in_note", "Find and replace text in a note.",
         {"path": S, "search": S, "replace": S}, ["path", "search", "replace"], RW),
    tool("obsidian_delete_note", "Delete a note.", {"path": S}, ["path"], RW),
    tool("obsidian_manage_frontmatter", "Get, set or delete frontmatter keys of a note.",
         {"path": S, "action": {"enum": ["get", "set", "delete"]}}, ["path", "action"], RO),
    tool("obsidian_manage_tags", "Add or remove tags of a note.", {"path": S, "tags": strings()}, ["path"], RW),
    tool("obsidian_execute_command", "Execute an Obsidian command by id.", {"commandId": S}, ["commandId"], RW),
    tool("obsidian_open_in_ui", "Open a note in the Obsidian app.", {"path": S}, ["path"], RW),
]

STEVEN_OBSIDIAN = [
    tool("read-note", "Read the content of an existing note in the vault.",
         {"vault": s("Name of the vault"), "filename": s("Just the note name, without path separators"),
          "folder": s("Optional subfolder path relative to the vault root")}, ["vault", "filename"]),
    tool("search-vault", "Search for text in the notes of a vault.",
         {"vault": S, "query": S, "path": s("Optional path relative to the vault root to limit the search"),
          "caseSensitive": {"type": "boolean", "default": False},
          "searchType": {"enum": ["content", "filename", "both"], "default": "content"}}, ["vault", "query"]),
    tool("list-available-vaults", "Lists all available vaults that can be used with other tools."),
    tool("create-note", "Create a new note.", {"vault": S, "filename": S, "content": S},
         ["vault", "filename", "content"]),
    tool("edit-note", "Edit an existing note.", {"vault": S, "filename": S, "operation": S, "content": S},
         ["vault", "filename", "operation", "content"]),
    tool("delete-note", "Delete a note.", {"vault": S, "path": S}, ["vault", "path"]),
    tool("move-note", "Move or rename a note.", {"vault": S, "source": S, "destination": S},
         ["vault", "source", "destination"]),
    tool("create-directory", "Create a directory in the vault.", {"vault": S, "path": S}, ["vault", "path"]),
    tool("add-tags", "Add tags to notes.", {"vault": S, "files": strings(), "tags": strings()},
         ["vault", "files", "tags"]),
    tool("remove-tags", "Remove tags from notes.", {"vault": S, "files": strings(), "tags": strings()},
         ["vault", "files", "tags"]),
    tool("rename-tag", "Rename a tag across the vault.", {"vault": S, "oldTag": S, "newTag": S},
         ["vault", "oldTag", "newTag"]),
    tool("manage-tags", "Add, remove or list the tags of a note.", {"vault": S, "path": S, "operation": S},
         ["vault", "path", "operation"]),
]

LOCAL_RAG = [
    tool("query_documents", "Search ingested documents by meaning and keywords.",
         {"query": S, "limit": {"type": "number"},
          "scope": {"oneOf": [s("absolute path prefix"), strings("absolute path prefixes")],
                    "description": "Absolute path prefix(es): '/docs/api' matches '/docs/api/auth.md' but not "
                                   "'/docs/apiv2'."}}, ["query"]),
    tool("ingest_file", "Ingest a document file into the local index.",
         {"filePath": s("Path to the file. Must be absolute.")}, ["filePath"]),
    tool("read_chunk_neighbors", "Read the chunks before and after a search hit.",
         {"filePath": S, "source": S, "chunkIndex": {"type": "integer"}, "before": {"type": "integer"},
          "after": {"type": "integer"}}, ["chunkIndex"]),
    tool("list_files", "List ingested files and the base directories (baseDirs) they come from.",
         {"scope": S}),
    tool("delete_file", "Delete an ingested file from the index.", {"filePath": S, "source": S}),
    tool("ingest_data", "Ingest raw content with metadata.", {"content": S, "metadata": {"type": "object"}},
         ["content", "metadata"]),
    tool("status", "Show the index status."),
    tool("sync_start", "Start a background sync of the base directories.", {"path": S}),
    tool("sync_status", "Show the progress of a background sync."),
]

# The three worked examples of the generic-files profile.
FS = [
    tool("read_text_file", "Read a file's text.", {"path": s("The file to read")}, ["path"], RO),
    tool("read_multiple_files", "Read several files at once.", {"paths": strings("The files to read")},
         ["paths"], RO),
    tool("list_directory", "List the entries of a directory.", {"path": s("The directory")}, ["path"], RO),
    tool("get_file_info", "A file's size, times and type.", {"path": s("The file")}, ["path"], RO),
    tool("search_files", "Find files whose names match a glob pattern under a directory.",
         {"path": s("Where the search starts"), "pattern": s("A glob pattern")}, ["path", "pattern"], RO),
    tool("list_allowed_directories", "The directories this server is allowed to serve.", {}, (), RO),
    tool("write_file", "Write text to a file.", {"path": S, "content": S}, ["path", "content"], RW),
]
VAULT = [
    tool("get_note", "Return one note.", {"filepath": s("Path of the note, relative to the vault root")},
         ["filepath"]),
    tool("get_notes", "Return several notes.", {"filepaths": strings("Paths relative to the vault root")},
         ["filepaths"]),
    tool("list_notes", "List the notes in a folder.", {"dirpath": s("Folder relative to the vault root")},
         ["dirpath"]),
    tool("search_notes", "Find notes whose text contains the query.", {"query": S}, ["query"]),
    tool("append_note", "Append text to a note.", {"filepath": s("relative to the vault root"), "content": S},
         ["filepath", "content"]),
]
DOCS = [
    tool("search_docs", "Search the documentation.", {"query": S, "limit": {"type": "integer", "default": 5}},
         ["query"]),
    tool("read_doc", "Read one document.", {"path": s("Path relative to the docs directory")}, ["path"]),
]

FIXTURES = {"official-fs": OFFICIAL_FS, "markus-obsidian": MARKUS_OBSIDIAN, "cyanheads-obsidian": CYANHEADS_OBSIDIAN,
            "steven-obsidian": STEVEN_OBSIDIAN, "local-rag": LOCAL_RAG, "fs": FS, "vault": VAULT, "docs": DOCS}
READ_MANY_DENIAL = ["is_error", "jsonrpc", {"text": r"(?i)\berror\b|access denied|forbidden|not allowed"}]

FS_MAPPED = [  # the worked example's five read tools; the official server gives the same five
    {"name": "read_text_file", "role": "read", "path": "path"},
    {"name": "read_multiple_files", "role": "read", "paths": "paths"},
    {"name": "list_directory", "role": "list", "path": "path"},
    {"name": "search_files", "role": "search", "query": "pattern", "path": "path"},
    {"name": "get_file_info", "role": "stat", "path": "path"},
]

# what each fixture should give: the mapped tools (exact entries), discloses_root, paths, confident
EXPECTED = {
    # Every tool of a role is mapped (read_file is DEPRECATED, directory_tree recursive: both are
    # probed, an escape through either is one all the same).
    "official-fs": ([FS_MAPPED[0], {"name": "read_file", "role": "read", "path": "path"},
                     {**FS_MAPPED[1], "denial": READ_MANY_DENIAL}, FS_MAPPED[2],
                     {"name": "list_directory_with_sizes", "role": "list", "path": "path"},
                     {"name": "directory_tree", "role": "list", "path": "path"}, FS_MAPPED[3], FS_MAPPED[4]],
                    ["list_allowed_directories"], "both", True),
    "markus-obsidian": ([
        {"name": "obsidian_get_file_contents", "role": "read", "path": "filepath"},
        {"name": "obsidian_batch_get_file_contents", "role": "read", "paths": "filepaths"},
        {"name": "obsidian_list_files_in_dir", "role": "list", "path": "dirpath"},
        {"name": "obsidian_simple_search", "role": "search", "query": "query"},
        {"name": "obsidian_get_frontmatter", "role": "stat", "path": "filepath"},
    ], None, "relative", True),
    "cyanheads-obsidian": ([
        {"name": "obsidian_get_note", "role": "read", "path": "/target/path",
         "arguments": {"target": {"type": "path"}, "format": "content"}},
        {"name": "obsidian_list_notes", "role": "list", "path": "path"},
        {"name": "obsidian_search_notes", "role": "search", "query": "query", "path": "pathPrefix",
         "arguments": {"mode": "text"}},
    ], None, "relative", True),
    "steven-obsidian": ([
        {"name": "read-note", "role": "read", "path": "filename"},
        {"name": "search-vault", "role": "search", "query": "query", "path": "path"},
    ], ["list-available-vaults"], "relative", False),
    "local-rag": ([
        {"name": "query_documents", "role": "search", "query": "query", "path": "scope"},
    ], ["list_files"], "absolute", False),  # a search alone: no read or list shows an escape
    "fs": (FS_MAPPED, ["list_allowed_directories"], "both", True),
    "vault": ([
        {"name": "get_note", "role": "read", "path": "filepath"},
        {"name": "get_notes", "role": "read", "paths": "filepaths"},
        {"name": "list_notes", "role": "list", "path": "dirpath"},
        {"name": "search_notes", "role": "search", "query": "query"},
    ], None, "relative", True),
    "docs": ([
        {"name": "read_doc", "role": "read", "path": "path"},
        {"name": "search_docs", "role": "search", "query": "query"},
    ], None, "relative", True),
}
WRITES = {"official-fs": ["write_file", "edit_file", "create_directory", "move_file"],
          "markus-obsidian": ["obsidian_append_content", "obsidian_patch_content", "obsidian_put_content",
                              "obsidian_delete_file"],
          "cyanheads-obsidian": ["obsidian_write_note", "obsidian_replace_in_note", "obsidian_manage_frontmatter",
                                 "obsidian_execute_command", "obsidian_open_in_ui"],
          "steven-obsidian": ["create-note", "edit-note", "move-note", "add-tags", "manage-tags"],
          "local-rag": ["ingest_file", "ingest_data", "delete_file", "sync_start"],
          "fs": ["write_file"], "vault": ["append_note"], "docs": []}


def notes_of(proposal, name):
    return [n for n in proposal.notes if n.startswith(f"{name}: ")]


@pytest.mark.parametrize("fixture", FIXTURES)
def test_auto_maps_the_read_tools_each_fixture_should_give(fixture):
    tools, roots, paths, confident = EXPECTED[fixture]
    proposal = propose(FIXTURES[fixture])
    assert proposal.mapping["tools"] == tools
    assert proposal.mapping.get("discloses_root") == roots
    assert proposal.mapping["paths"] == paths
    assert proposal.mapping["denial"] == ["is_error", "jsonrpc"]
    assert proposal.confident is confident


@pytest.mark.parametrize("fixture", FIXTURES)
def test_auto_never_maps_a_write_execute_or_side_effect_tool(fixture):
    proposal = propose(FIXTURES[fixture])
    mapped = {t["name"] for t in proposal.mapping["tools"]} | set(proposal.mapping.get("discloses_root", []))
    assert not mapped & set(WRITES[fixture])
    for name in WRITES[fixture]:
        assert any("never" in n or "left out" in n for n in notes_of(proposal, name)), name


@pytest.mark.parametrize("fixture", FIXTURES)
def test_every_listed_tool_gets_a_note(fixture):
    proposal = propose(FIXTURES[fixture])
    for t in FIXTURES[fixture]:
        assert notes_of(proposal, t["name"]), t["name"]


@pytest.mark.parametrize("fixture", FIXTURES)
def test_the_rendered_proposal_loads_into_a_mapping_the_schema_accepts(fixture):
    proposal = propose(FIXTURES[fixture])
    jsonschema.validate({"server": SERVER, **proposal.mapping}, SCHEMA)
    text = render(proposal, SERVER)
    assert text.startswith("# proposed by --mapping auto (retrieval-contract map): review before use\n")
    loaded = yaml.safe_load(text)
    assert loaded == {"server": SERVER, **proposal.mapping}
    jsonschema.validate(loaded, SCHEMA)
    assert all(f"# - {n}" in text for n in proposal.notes)


def test_without_a_server_the_rendered_yaml_is_the_mapping_and_says_what_to_add():
    proposal = propose(DOCS)
    text = render(proposal)
    assert yaml.safe_load(text) == proposal.mapping
    assert "server" in text.split("\n", 3)[2]


def test_official_fs_probes_the_deprecated_alias_and_every_listing_but_not_the_media_reader():
    proposal = propose(OFFICIAL_FS)
    assert "DEPRECATED: probed" in " ".join(notes_of(proposal, "read_file"))
    assert "media" in " ".join(notes_of(proposal, "read_media_file"))
    for listing in ("list_directory", "list_directory_with_sizes", "directory_tree"):
        assert "mapped as a list tool" in " ".join(notes_of(proposal, listing)), listing
    assert "probe both forms" in " ".join(proposal.notes)


def test_a_read_tool_whose_only_alternative_is_deprecated_is_kept_but_not_confident():
    proposal = propose([OFFICIAL_FS[0]])
    assert [t["name"] for t in proposal.mapping["tools"]] == ["read_file"]
    assert proposal.confident is False


def test_read_only_hint_never_turns_a_write_verb_tool_into_a_read_tool():
    lying = tool("edit_note", "Read and edit a note.", {"path": S}, ["path"], RO)
    proposal = propose([lying, DOCS[1]])
    assert [t["name"] for t in proposal.mapping["tools"]] == ["read_doc"]
    assert "never mapped" in notes_of(proposal, "edit_note")[0]


def test_every_tool_of_a_role_is_mapped_the_read_only_hinted_first():
    a = tool("read_note", "Read a note.", {"path": S}, ["path"])
    b = tool("read_page", "Read a page.", {"path": S}, ["path"], RO)
    proposal = propose([a, b])
    assert [t["name"] for t in proposal.mapping["tools"]] == ["read_page", "read_note"]
    assert proposal.confident is True


def test_a_search_without_a_read_or_list_is_not_confident():
    proposal = propose([tool("search_docs", "Search the docs.", {"query": S}, ["query"])])
    assert [t["name"] for t in proposal.mapping["tools"]] == ["search_docs"]
    assert proposal.confident is False
    assert any("escape checks cannot pass" in n for n in proposal.notes)


def test_a_path_guessed_from_a_description_alone_is_not_confident():
    read = tool("read_note", "Read a note.", {"identifier": s("Title, permalink or file path of the note")},
                ["identifier"])
    proposal = propose([read])
    assert proposal.mapping["tools"] == [{"name": "read_note", "role": "read", "path": "identifier"}]
    assert proposal.confident is False


def test_steven_obsidian_maps_filename_and_says_the_folder_part_goes_unprobed():
    proposal = propose(STEVEN_OBSIDIAN)
    said = " ".join(notes_of(proposal, "read-note"))
    assert "'folder'" in said and "untested" in said
    assert "'vault'" in said  # required, no value auto can choose


def test_markus_obsidian_notes_why_the_periodic_and_vault_listing_tools_are_left_out():
    proposal = propose(MARKUS_OBSIDIAN)
    assert "no path argument" in " ".join(notes_of(proposal, "obsidian_list_files_in_vault"))
    assert "no path argument" in " ".join(notes_of(proposal, "obsidian_get_periodic_note"))
    assert "query" in " ".join(notes_of(proposal, "obsidian_search_by_tag"))


def test_local_rag_calls_ingest_file_a_read_with_a_side_effect():
    proposal = propose(LOCAL_RAG)
    assert "side effect" in " ".join(notes_of(proposal, "ingest_file"))


def test_a_description_naming_the_root_is_noted():
    listed = tool("read_text_file", "Read a file under /srv/fixture-root.", {"path": S}, ["path"])
    proposal = propose([listed], root="/srv/fixture-root")
    assert any("names the root" in n for n in notes_of(proposal, "read_text_file"))


def test_no_mappable_tool_is_not_confident():
    proposal = propose([FS[-1]])
    assert proposal.mapping["tools"] == [] and proposal.confident is False


def test_a_path_inside_a_list_of_objects_is_mapped_by_pointer_and_sent_as_a_one_item_list():
    """`files: [{path, encoding}]`: auto maps /files/0/path with the item's pinned fields fixed,
    and the mapping's pointer builds the list on every call (contract_tests.contracts.mapping.put)."""
    from contract_tests.contracts.mapping import path_arguments, validate
    item = {"type": "object", "properties": {"path": S, "encoding": {"type": "string", "default": "utf-8"}},
            "required": ["path"]}
    reader = tool("read_files", "Read files.", {"files": {"type": "array", "items": item}}, ["files"])
    proposal = propose([reader])
    entry = proposal.mapping["tools"][0]
    assert entry == {"name": "read_files", "role": "read", "path": "/files/0/path",
                     "arguments": {"files": [{"encoding": "utf-8"}]}}
    mapping = validate({"server": SERVER, **proposal.mapping}, "auto")
    (argument,) = path_arguments(mapping)
    assert argument.arguments("../x.md") == {"files": [{"encoding": "utf-8", "path": "../x.md"}]}
    assert argument.arguments("y.md") == {"files": [{"encoding": "utf-8", "path": "y.md"}]}  # the fixed item untouched
    assert mapping["tools"][0]["arguments"] == {"files": [{"encoding": "utf-8"}]}
