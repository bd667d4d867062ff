"""The reference's note-read path: any regular file in the vault is a note; safety is unchanged."""

from __future__ import annotations

import os

import pytest

from reference.section_source.paths import NoteNotFound, UnsafePath, read_note
from reference.section_source.tools import get_section_source


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    (root / "files").mkdir(parents=True)
    (root / "\u65e5\u672c").mkdir()
    (root / "files" / "readme.txt").write_text("# Read me\n\ntext\n", encoding="utf-8")
    (root / "\u65e5\u672c" / "\u30e1\u30e2").write_text("# \u898b\u51fa\u3057\n", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("# outside\n", encoding="utf-8")
    os.symlink("../../outside.txt", root / "files" / "escape.txt")
    os.symlink("../outside.txt", root / "escape-no-extension")
    return root.resolve()


def test_a_txt_note_is_read_and_titled_from_its_whole_name(vault):
    out = get_section_source(vault, "files/readme.txt")
    assert out["title"] == "readme.txt"
    assert [s["heading_text"] for s in out["sections"]] == ["Read me"]


def test_a_note_without_an_extension_is_read_and_titled_from_its_name(vault):
    out = get_section_source(vault, "\u65e5\u672c/\u30e1\u30e2")
    assert out["title"] == "\u30e1\u30e2"
    assert out["sections"][0]["section_id"] == "note:h1-heading-0001"


@pytest.mark.parametrize("path", ["files/escape.txt", "escape-no-extension"])
def test_symlinks_out_of_the_vault_stay_blocked_whatever_the_extension(vault, path):
    with pytest.raises(UnsafePath):
        read_note(vault, path)


@pytest.mark.parametrize("path", ["files", "\u65e5\u672c", "files/missing.txt"])
def test_directories_and_missing_files_are_not_notes(vault, path):
    with pytest.raises(NoteNotFound):
        read_note(vault, path)


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/hostname", "files/../../outside.txt"])
def test_traversal_and_absolute_paths_are_refused_before_reading(vault, path):
    with pytest.raises(UnsafePath):
        get_section_source(vault, path)
