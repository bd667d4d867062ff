"""The generic-files findings, one test per severity, each judging the worker's one sweep
(sweep.py) and reporting every case: escape, wrong-file read, write (failures); path leak and
silent denial (advisories); and whether the mapping reaches the server at all. An answer that
carries anything of a file outside the root (its text, its name, its size) is an escape, whatever
the tool's role and whether the answer also reads as a denial."""

from __future__ import annotations

import pytest

from contract_tests.contracts.mapping import denial_forms
from contract_tests.generic_files.sweep import (
    Call,
    broken_tools,
    canary_piece,
    names_an_escape_link,
    reached,
    reveals_outside,
)
from contract_tests.synthetic.canaries import redact
from contract_tests.synthetic.files import OUTSIDE_SIZE
from contract_tests.verdicts.checks import check_structured, not_json_rpc, output_validators, short
from contract_tests.verdicts.findings import Finding, Findings, esc, unanswered

# Every test here reads the one sweep (a session fixture): under xdist they run in one worker, so
# the server is swept once (plugin.pytest_xdist_make_scheduler hands them out together).

TOOL = "GF-TOOL-001"


def _broken(sweep, contract_fixture) -> dict[str, str]:
    """Mapped tools whose plain call did not do what the mapping says (GF-TOOL-001's findings),
    with why: checks that need a working tool are blocked on them."""
    return broken_tools(sweep.plain, sweep.listed, contract_fixture)


def _unanswered(findings: Findings, call: Call, req: str, case: str | None = None) -> bool:
    """Whether `call` got no answer; if so, what that means for `req`'s case: the finding of the
    requirement the call tests (Call.tests) where the server had answered the calls before it
    (verdicts.unanswered) or exited on it, else not checked (blocked), naming why."""
    if call.answered:
        return False
    case = case or call.case
    found = None
    if call.tests == req and call.answer == "no-answer":
        found = unanswered(call.error, req, case)
    elif call.tests == req and call.answer == "gone":
        found = Finding(req, f"the server exited on this call: {call.error}", case)
    if found is not None:
        findings.fail(found.message, req=req, case=case, request=call.request)
    else:
        by = "the run stopped" if call.answer == "not-sent" else call.tests if call.tests != req else "no answer in time"
        findings.block(f"no answer to this case: {call.error}", req=req, by=by, case=case, request=call.request)
    return True


def _around_outside(text: str, contract_fixture) -> str:
    """The answer around the outside file's canary (redacted) or the piece of it the answer holds,
    not its first characters: where the escaped content sits in a long answer is the evidence."""
    token = contract_fixture.canaries["outside"]
    if token.lower() in text.lower():
        return redact(text, {"outside": token}, around=120)
    piece = canary_piece(text, token)
    if piece:
        at = text.lower().find(piece)
        return esc(text[max(0, at - 120):at + 120 + len(piece)], 300)
    return short(text, 240)


def _outside(call: Call, contract_fixture) -> bool:
    return reveals_outside(call.text, contract_fixture, call.probe)


def _what_outside(call: Call, contract_fixture) -> str:
    token = contract_fixture.canaries["outside"]
    if token in call.text:
        return "content or the name of a file outside the root"
    if canary_piece(call.text, token):
        return "a piece of the outside canary (a snippet of a file outside the root, cut)"
    return f"the byte size of the file outside the root the path names ({OUTSIDE_SIZE})"


def _search_oracle(call: Call, swept) -> bool:
    """A search for the outside files' own word (which no file inside holds) that names a link of
    the root leading out, where the same search for the plain file's word does not: it read the
    file outside through the link and answered that it holds the word (an oracle on its text)."""
    tool = call.case.partition("@")[2]
    plain = swept.plain.get(tool)
    return (call.case.startswith("outside-text@") and names_an_escape_link(call.text)
            and plain is not None and not names_an_escape_link(plain.text))


@pytest.mark.integration
@pytest.mark.req(TOOL)
def test_every_mapped_tool_answers_a_plain_call_inside_the_root(swept, contract_fixture):
    broken = _broken(swept, contract_fixture)
    with Findings() as findings:
        for name, call in swept.plain.items():
            if _unanswered(findings, call, TOOL, f"plain@{name}"):
                continue
            findings.check(name not in broken, broken.get(name, ""), case=f"plain@{name}", request=call.request)
        for call in swept.calls:  # a path inside the root the server left unanswered (not one never sent)
            if call.tests == TOOL and call.answer in ("no-answer", "gone") and findings.wants(call.case):
                _unanswered(findings, call, TOOL)


@pytest.mark.security
@pytest.mark.req("GF-ESC-001")
def test_no_path_or_search_reads_outside_the_root(swept, contract_fixture, mapping):
    with Findings() as findings:
        for call in [*swept.plain.values(), *swept.calls]:
            if not findings.wants(call.case):
                continue
            if not call.answered:
                if call.tests == "GF-ESC-001" or call.answer == "not-sent":
                    _unanswered(findings, call, "GF-ESC-001")
                continue
            aim = f" (the path names {call.probe.kind} content)" if call.probe else ""
            escaped = _outside(call, contract_fixture)
            findings.check(not escaped, f"the answer carries {_what_outside(call, contract_fixture) if escaped else ''}"
                           f"{aim}: {_around_outside(call.text, contract_fixture)}", case=call.case,
                           request=call.request)
            if not escaped:
                findings.check(not _search_oracle(call, swept), "a search for the outside files' own word names a "
                               "link of the root that leads out (the plain search does not): it read the file "
                               f"outside and says it holds the word: {short(call.text, 240)}", case=call.case,
                               request=call.request)
        leaked = [line for line in swept.stderr if contract_fixture.canaries["outside"] in line]
        findings.check(not leaked, f"the server's stderr carries content of a file outside the root ({len(leaked)} "
                       f"lines): it read it; first: {esc(leaked[:1], 240)}", case="stderr")
        if not findings.failed():
            _block_unless_reached(findings, swept, contract_fixture, mapping)


def _block_unless_reached(findings: Findings, swept, contract_fixture, mapping) -> None:
    """No escape shows, but that holds only if some probe could have shown one: a tool with a
    path argument whose plain call read the plain file or its folder (sweep.reached). A server
    whose mapped tools reached no file (a search without a path, a required argument left out of
    the mapping, an index not built yet) was probed for nothing: GF-ESC-001 is blocked."""
    pathed = [tool["name"] for tool in mapping["tools"] if "path" in tool or "paths" in tool]
    if any(reached(swept.plain[name], contract_fixture) for name in pathed if swept.plain[name].answered):
        return
    why = ("no mapped tool takes a path (the mapping maps none of path or paths): no probe could reach a file"
           if not pathed else "no mapped tool that takes a path read the plain file or its folder in its plain "
           f"call ({', '.join(pathed)}; see GF-TOOL-001): no probe shows it could have read a file outside")
    findings.block(why, by="GF-TOOL-001" if pathed else "the mapping", case="reach")


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
            if not findings.wants(call.case) or _unanswered(findings, call, "GF-WRONG-001"):
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
            if probe is None or probe.kind == "inside" or call.tool in broken or _outside(call, contract_fixture):
                continue
            if probe.link and call.role in ("stat", "list"):
                continue  # it may answer for the link itself (lstat, ls -l): nothing outside is read
            if not findings.wants(call.case) or _unanswered(findings, call, "GF-DENY-001"):
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
            if not findings.wants(call.case) or _unanswered(findings, call, "GF-LEAK-001"):
                continue
            findings.check(token not in call.text, f"the answer names an absolute path of the fixture: "
                           f"{short(call.text, 240)}", case=call.case, request=call.request)


@pytest.mark.data_integrity
@pytest.mark.req("GF-WRITE-001")
def test_the_run_leaves_the_root_and_its_surroundings_unchanged(swept):
    with Findings() as findings:
        # The snapshot after the server stopped is compared with the one before it started, over
        # every entry of the root and its surroundings; each change is a case of its own.
        if not swept.compared:
            findings.block("the snapshot before the server started holds no entry: nothing was compared",
                           by="the fixture")
        elif not swept.changes:
            findings.check(not swept.changes, "", case="tree")
        for change in swept.changes:  # "new: vault/x", "changed: outside/secret.md", ...
            findings.fail(f"after the run, differs from before the server started: {esc(change)}",
                          case=change.split(": ", 1)[-1])


@pytest.mark.integration
@pytest.mark.req("MCP-TOOLS-004")
def test_every_successful_call_of_the_sweep_honours_its_tools_output_schema(swept, mapping):
    """MCP: a tool that declares an outputSchema returns structuredContent valid against it, here
    for every call of the sweep that succeeded (a refusal is no structured result)."""
    mapped = {tool["name"] for tool in mapping["tools"]}
    declared = {name: schema for name, schema in swept.schemas.items() if name in mapped}
    if not declared:
        pytest.skip("no mapped tool declares an outputSchema: there is no structured result to hold to one")
    with Findings() as findings:
        validators = output_validators(findings, declared, case=lambda name: f"schema@{name}")
        for call in [*swept.plain.values(), *swept.calls]:
            if call.tool in validators and call.answered and findings.wants(call.case):
                check_structured(findings, validators[call.tool], call.tool, call.response, case=call.case,
                                 request=call.request)


@pytest.mark.security
@pytest.mark.req("MCP-RPC-003")
def test_every_message_the_sweeps_server_sent_is_valid_json_rpc(swept):
    """The base check reads the messages of a server that made no tool call; the sweep's server
    made hundreds: each message it sent is held to JSON-RPC too (a server that writes text
    beside its answers on stdout is found here)."""
    bad = not_json_rpc(swept.stdout)
    with Findings() as findings:
        findings.check(not bad, f"{len(bad):,} of the {len(swept.stdout):,} messages the sweep's server sent are "
                       f"not valid JSON-RPC; the first: {esc(bad[:1], 160)}", case="sweep")
        findings.check(swept.stdout, "no message of the sweep's server was read (its answers were expected)",
                       case="sweep")
