"""The generic-files findings, one test per severity, each judging the worker's one sweep
(sweep.py) and reporting every case: escape, wrong-file read, write (failures); path leak and
silent denial (advisories); and whether the mapping reaches the server at all."""

from __future__ import annotations

import pytest

from contract_tests.checks import short
from contract_tests.generic_files.sweep import PLAIN_FILE, Call
from contract_tests.mapping import denial_forms
from contract_tests.verdicts import Findings, esc

TOOL = "GF-TOOL-001"


def _broken(sweep, contract_fixture) -> dict[str, str]:
    """Mapped tools whose plain call did not do what the mapping says (GF-TOOL-001's findings),
    with why: checks that need a working tool are blocked on them."""
    out = {}
    token = f"rcf{contract_fixture.file_token(PLAIN_FILE)}"
    for name, call in sweep.plain.items():
        if name not in sweep.listed:
            out[name] = f"{name} is not listed by tools/list (listed: {esc(sorted(map(str, sweep.listed))[:20])})"
        elif call.denied:
            out[name] = f"a plain call was answered as a denial: {short(call.response, 300)}"
        elif call.role == "read" and token not in call.text:
            out[name] = f"a read of {PLAIN_FILE} did not return its content: {short(call.response, 300)}"
        elif call.role == "list" and "example.md" not in call.text:
            out[name] = f"a list of inbox/ did not name example.md: {short(call.response, 300)}"
    return out


def _outside(call: Call, contract_fixture) -> bool:
    return contract_fixture.canaries["outside"] in call.text


@pytest.mark.integration
@pytest.mark.req(TOOL)
def test_every_mapped_tool_answers_a_plain_call_inside_the_root(swept, contract_fixture):
    broken = _broken(swept, contract_fixture)
    with Findings() as findings:
        for name, call in swept.plain.items():
            findings.check(name not in broken, broken.get(name, ""), case=f"plain@{name}", request=call.request)


@pytest.mark.security
@pytest.mark.req("GF-ESC-001")
def test_no_path_or_search_reads_outside_the_root(swept, contract_fixture):
    with Findings() as findings:
        for call in [*swept.plain.values(), *swept.calls]:
            if not findings.wants(call.case):
                continue
            aim = f" (the path names {call.probe.kind} content)" if call.probe else ""
            findings.check(not _outside(call, contract_fixture), f"the answer carries content of a file outside "
                           f"the root{aim}: {short(call.text, 240)}", case=call.case, request=call.request)
        leaked = [line for line in swept.stderr if contract_fixture.canaries["outside"] in line]
        findings.check(not leaked, f"the server's stderr carries content of a file outside the root ({len(leaked)} "
                       f"lines): it read it; first: {esc(leaked[:1], 240)}", case="stderr")


@pytest.mark.security
@pytest.mark.req("GF-WRONG-001")
def test_a_read_returns_only_the_file_its_path_names(swept, contract_fixture, mapping):
    if not any(tool["role"] == "read" for tool in mapping["tools"]):
        pytest.skip("the mapping maps no read tool: there is no read whose file to check")
    broken = _broken(swept, contract_fixture)
    with Findings() as findings:
        for name in sorted(broken):
            if swept.plain[name].role == "read":
                findings.block(f"{name}: {broken[name]}", by=TOOL, case=f"plain@{name}")
        for call in swept.calls:
            if call.role != "read" or call.probe is None or call.tool in broken or _outside(call, contract_fixture):
                continue  # outside content is the escape's finding
            if not findings.wants(call.case):
                continue
            probe = call.probe
            allowed = set(probe.expected)
            wrong = sorted(set(contract_fixture.owner_of(call.text)) - allowed)
            named = (f"names {' or '.join(sorted(allowed))}" if allowed else "names no file" if probe.kind == "missing"
                     else f"names {probe.kind} content")
            findings.check(not wrong, f"the path {named}, and the answer carries the content of {esc(wrong[:3])}",
                           case=call.case, request=call.request)


@pytest.mark.security
@pytest.mark.req("GF-DENY-001")
def test_a_path_that_is_not_served_is_denied_visibly(swept, contract_fixture, mapping):
    broken = _broken(swept, contract_fixture)
    with Findings() as findings:
        for name in sorted(broken):
            findings.block(f"{name}: {broken[name]}", by=TOOL, case=f"plain@{name}")
        for call in swept.calls:
            probe = call.probe
            if probe is None or probe.kind == "inside" or call.tool in broken or _outside(call, contract_fixture) \
                    or "rc_no_answer" in call.response:
                continue
            if probe.link and call.role in ("stat", "list"):
                continue  # it may answer for the link itself (lstat, ls -l): nothing outside is read
            if not findings.wants(call.case):
                continue
            aim = "nothing that exists" if probe.kind == "missing" else "something outside the root"
            forms = ", ".join(str(f) for f in denial_forms(mapping, call.tool)) or "none declared"
            findings.check(call.denied, f"the path names {aim}, and the answer is a normal result in none of the "
                           f"mapping's denial forms ({forms}): {short(call.text, 200)}", case=call.case,
                           request=call.request)


@pytest.mark.security
@pytest.mark.req("GF-LEAK-001")
def test_no_answer_names_the_roots_absolute_path(swept, contract_fixture, mapping):
    if mapping["paths"] != "relative":
        pytest.skip(f"the mapping's paths are {mapping['paths']}: a server that takes absolute paths names the root "
                    "by design (GF-LEAK-001 judges root-relative servers only)")
    token = contract_fixture.canaries["path"]  # in the name of the directory that holds the root
    disclosing = set(mapping.get("discloses_root", []))
    with Findings() as findings:
        for call in [*swept.plain.values(), *swept.calls]:
            if call.tool in disclosing or token in call.request:
                continue  # an absolute path the suite sent may come back: the client knows it
            if not findings.wants(call.case):
                continue
            findings.check(token not in call.text, f"the answer names an absolute path of the fixture: "
                           f"{short(call.text, 240)}", case=call.case, request=call.request)


@pytest.mark.data_integrity
@pytest.mark.req("GF-WRITE-001")
def test_the_run_leaves_the_root_and_its_surroundings_unchanged(swept):
    with Findings() as findings:
        findings.check(True, "")  # the comparison ran: an unchanged tree is this check holding
        for change in swept.changes:  # "new: vault/x", "changed: outside/secret.md", ...
            findings.fail(f"after the run, differs from before the server started: {esc(change)}",
                          case=change.split(": ", 1)[-1])
