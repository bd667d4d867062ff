"""Implementation declarations: `retrieval-contract declare` proposes one from a server's
behaviour; with a declaration the suite holds the server to it; a bad one is a usage error."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from contract_tests.contracts import specs as contracts
from tests.conftest import mutant_command


def _declare(tmp_path, profile: str, server_cmd: str) -> dict:
    out = tmp_path / "declaration.yaml"
    proc = subprocess.run([sys.executable, "-m", "contract_tests.cli", "declare", "--profile", profile,
                           "--server-cmd", server_cmd, "--out", str(out)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return yaml.safe_load(out.read_text())


def test_the_proposal_for_the_reference_is_its_shipped_declaration(tmp_path):
    profile = contracts.load_profile("retrieval-tools")
    proposed = _declare(tmp_path, "retrieval-tools", profile.reference_command("stdio"))
    shipped = yaml.safe_load(open(profile.reference_declaration()))
    for key in ("error_codes", "error_channel", "choices"):
        assert proposed[key] == shipped[key], key


def test_a_proposed_declaration_holds_the_variant_to_its_choices(tmp_path, suite_run):
    """The variant with other names, codes and shapes, declared: the suite passes and checks the
    declared values (RT-ERR-001 against the declared codes)."""
    proposed = _declare(tmp_path, "retrieval-tools", mutant_command("rt_variant_open_choices"))
    assert proposed["error_channel"] == "jsonrpc" and proposed["parameters"]["get_snippet"]["start_line"] == "start"
    path = tmp_path / "declared.yaml"
    path.write_text(yaml.safe_dump(proposed))
    run = suite_run("--profile", "retrieval-tools", "--server-cmd", mutant_command("rt_variant_open_choices"),
                    "--declare", str(path), "--req", "RT-ERR-001,RT-ERR-004,RT-ENV-002,RT-OPEN-001,RT-TOOL-003",
                    "-n", "2")
    assert run.code == 0, run.output[-3000:]
    wrong = dict(proposed, error_codes=dict(proposed["error_codes"], missing_file="FILE_NOT_FOUND"))
    path.write_text(yaml.safe_dump(wrong))
    run = suite_run("--profile", "retrieval-tools", "--server-cmd", mutant_command("rt_variant_open_choices"),
                    "--declare", str(path), "--req", "RT-ERR-001")
    assert run.code == pytest.ExitCode.TESTS_FAILED
    assert "declared FILE_NOT_FOUND" in run.output


@pytest.mark.parametrize("body,message", [
    ("profile: retrieval-tools\nerror_channel: carrier-pigeon\n", "not a valid declaration"),
    ("profile: section-source-local\nerror_codes: {x: Y}\n", "leaves no choice named 'error_codes'"),
    ("profile: retrieval-tools\nerror_codes: {no_such_class: X}\n", "not a failure class"),
    ("profile: section-source-hosted\nextra_tools: []\n", "declares profile"),
    ("profile: retrieval-tools\nchoices: {open_hidden: allow, color: blue}\n", "not a choice"),
])
def test_a_bad_declaration_is_a_usage_error(suite_run, tmp_path, body, message):
    path = tmp_path / "bad.yaml"
    path.write_text(body)
    profile = "section-source-local" if "section-source-local" in body else "retrieval-tools"
    run = suite_run("--profile", profile, "--declare", str(path), "--req",
                    "RT-ERR-001" if profile == "retrieval-tools" else "SSL-OUT-001")
    assert run.code == pytest.ExitCode.USAGE_ERROR, run.output[-2000:]
    assert message in run.output


def test_declared_commands_find_scripts_beside_the_declaration(tmp_path):
    from contract_tests.contracts import declarations
    from contract_tests.contracts import specs as contracts
    folder = tmp_path / "conformance"
    folder.mkdir()
    (folder / "load.py").write_text("print('loaded')\n")
    (folder / "decl.yaml").write_text("profile: open-notebook\nload_command: '{python} load.py --into {store}'\n")
    notes: list[str] = []
    data = declarations.load(str(folder / "decl.yaml"), contracts.load_profile("open-notebook"), notes)
    import shlex
    assert "load_command" not in data and any("deprecated" in note for note in notes), notes
    assert shlex.split(data["commands"]["load"]) == ["{python}", str(folder / "load.py"), "--into", "{store}"]


def test_declare_on_a_server_that_cannot_start_exits_6_with_its_stderr(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "contract_tests.cli", "declare", "--profile", "section-source-local",
                           "--server-cmd", "{python} -c \"import sys; print('boom-at-start', file=sys.stderr); "
                           "sys.exit(3)\""], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 6, proc.stderr[-2000:]
    assert "boom-at-start" in proc.stderr and "Traceback" not in proc.stderr


def test_declare_names_every_seed_silent_choice_it_did_not_observe_and_prints_what_it_wrote(tmp_path):
    profile = contracts.load_profile("open-notebook")
    out = tmp_path / "decl.yaml"
    proc = subprocess.run([sys.executable, "-m", "contract_tests.cli", "declare", "--profile", "open-notebook",
                           "--server-cmd", profile.reference_command("stdio"), "--out", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    written = out.read_text()
    assert proc.stdout == written and f"wrote {out}" in proc.stderr
    for choice in profile.data["declarable"]["choices"]:
        assert f"{choice}:" in written, choice
    assert yaml.safe_load(written)["profile"] == "open-notebook"


def test_declare_takes_a_profiles_further_commands(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "contract_tests.cli", "declare", "--profile", "vault-agent",
                           "--server-cmd", "{python} -m reference.vault_agent mcp", "--rc-command", "nope=x"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 4 and "ROLE=CMD" in proc.stderr, proc.stderr[-2000:]


def test_a_declaration_naming_the_load_command_twice_is_refused(tmp_path):
    from contract_tests.contracts import declarations
    from contract_tests.contracts import specs as contracts
    path = tmp_path / "decl.yaml"
    path.write_text("profile: open-notebook\nload_command: 'a'\ncommands: {load: 'b'}\n")
    with pytest.raises(declarations.DeclarationError, match="name the same command"):
        declarations.load(str(path), contracts.load_profile("open-notebook"))



def test_a_declaration_with_a_renamed_key_is_read_in_its_new_place_with_a_warning(tmp_path):
    """Users keep declarations in their repositories: vault-agent's `choices.traversal_code` and
    `choices.unknown_note_id` (a week-old suite's spelling) are read as `error_codes`, with a
    note naming the new place, until the next major version."""
    from contract_tests.contracts import declarations
    from contract_tests.contracts import specs as contracts
    path = tmp_path / "decl.yaml"
    path.write_text("profile: vault-agent\nchoices:\n  traversal_code: INVALID_PATH\n  unknown_note_id: INVALID_ID\n"
                    "  batch: refuse\n")
    notes: list[str] = []
    data = declarations.load(str(path), contracts.load_profile("vault-agent"), notes)
    assert data["error_codes"] == {"traversal": "INVALID_PATH", "absolute": "INVALID_PATH", "note_unknown": "INVALID_ID"}
    assert data["choices"] == {"batch": "refuse"}
    assert any("`choices.traversal_code` is renamed" in n and "error_codes.traversal" in n for n in notes), notes
    assert any("`choices.unknown_note_id` is renamed" in n and "error_codes.note_unknown" in n for n in notes), notes
    path.write_text("profile: vault-agent\nchoices: {traversal_code: INVALID_PATH}\nerror_codes: {traversal: PATH_OUTSIDE_VAULT}\n")
    with pytest.raises(declarations.DeclarationError, match="disagree"):
        declarations.load(str(path), contracts.load_profile("vault-agent"))
    path.write_text("profile: vault-agent\nchoices: {traversal_code: NOT_A_CODE}\n")
    with pytest.raises(declarations.DeclarationError, match="not among the codes"):  # still held to what is allowed
        declarations.load(str(path), contracts.load_profile("vault-agent"))


def test_every_renamed_declaration_key_names_a_place_the_profile_declares():
    for profile_id in contracts.available_profiles():
        declarable = contracts.load_profile(profile_id).data.get("declarable", {})
        for old, new in declarable.get("renamed", {}).items():
            for target in [new] if isinstance(new, str) else new:
                section, _, key = target.partition(".")
                assert section in declarable, (profile_id, old, target)
                if section == "choices":
                    assert key in declarable["choices"], (profile_id, old, target)
