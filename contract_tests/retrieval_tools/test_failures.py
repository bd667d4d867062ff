"""Integration tier: the failures the suite provokes. An invalid repo is REPO_INVALID; an empty
query, a zero limit and a bad range give errors; each failure class of the profile gives one
stable code and missing, unreadable and out-of-root are told apart. Checks read only the fields
seed 003 names."""

from __future__ import annotations

import pytest

from contract_tests.contracts import specs as contracts
from contract_tests.retrieval_tools.common import Calls, Findings, crash, crash_findings, profiles_mark
from contract_tests.synthetic.roots import NEEDLE_COMMON
from contract_tests.verdicts.checks import called_ok, error_code, json_pointer, structured_error
from contract_tests.verdicts.findings import esc
from contract_tests.verdicts.running import judged_elsewhere, own

pytestmark = [profiles_mark, pytest.mark.integration]


@pytest.mark.req("RT-ERR-002", "RT-ENV-002")
@pytest.mark.parametrize("tool", ["search", "open_file", "get_snippet", "list_dir"])
@pytest.mark.parametrize("repo", ["both-ish", "DOCS", "", "../docs"])
def test_an_invalid_repo_is_repo_invalid(calls, tool, repo):
    args = {"search": {"query": NEEDLE_COMMON, "repo": repo}, "open_file": {"repo": repo, "path": "README.md"},
            "get_snippet": {"repo": repo, "path": "README.md", "start_line": 1, "end_line": 1},
            "list_dir": {"repo": repo}}[tool]
    code, _doc, request = calls.error(tool, args, f"{tool} repo={repo!r}", req="RT-ERR-002")
    with Findings() as findings:
        findings.check(code == "REPO_INVALID", f"code {esc(code)}, not REPO_INVALID", req="RT-ERR-002", request=request)


@pytest.mark.req("RT-ERR-002", "RT-ENV-002")
@pytest.mark.parametrize("tool", ["open_file", "get_snippet", "list_dir"])
def test_both_is_not_a_repo_for_the_file_tools(calls, tool):
    args = {"repo": "both", "path": "README.md"} | ({"start_line": 1, "end_line": 1} if tool == "get_snippet" else {})
    code, _doc, request = calls.error(tool, args, f"{tool} repo=both", req="RT-ERR-002")
    with Findings() as findings:
        findings.check(code == "REPO_INVALID", f"code {esc(code)}, not REPO_INVALID", req="RT-ERR-002", request=request)


@pytest.mark.req("RT-ERR-003", "RT-ENV-002")
@pytest.mark.parametrize("args", [{"query": ""}, {"query": NEEDLE_COMMON, "limit": 0}], ids=["empty-query", "limit-0"])
def test_an_empty_query_or_a_zero_limit_is_a_structured_error(calls, args):
    calls.error("search", {"repo": "both", **args}, f"search {args}", req="RT-ERR-003")


# The requirement whose check reports a failure-class call that succeeded (it forbids the call).
FORBIDDEN_BY = {"traversal": "RT-PATH-001", "absolute": "RT-PATH-002", "absolute_dir": "RT-PATH-002",
                "symlink_escape": "RT-PATH-002", "symlink_escape_dir": "RT-PATH-002",
                "query_empty": "RT-ERR-003", "limit_invalid": "RT-ERR-003", "range_invalid": "RT-SNIP-003",
                "repo_invalid": "RT-ERR-002"}


def _class_codes(profile, calls_for, fixture, findings) -> dict[str, dict[str, tuple]]:
    """class id -> {case label -> (code, reason, request)}, every case run on its server (a class
    whose server cannot run is left out)."""
    reason_field = contracts.DECLARATION.get("reason_field")
    out: dict[str, dict[str, tuple[str | None, str]]] = {}
    crashed: set[str] = set()
    for klass in profile.data["failure_classes"]:
        calls = calls_for(klass)
        if calls is None:
            continue
        for case in klass["cases"]:
            args = {k: (v.replace("{root}", str(fixture.root)) if isinstance(v, str) else v)
                    for k, v in case["arguments"].items()}
            response, request = calls.raw(case["tool"], args)
            label = f"{klass['id']}: {case['tool']} {esc(args)}"
            if called_ok(response):
                if FORBIDDEN_BY.get(klass["id"], "").startswith("RT-PATH-"):
                    judged_elsewhere(request)  # outside content in its answer is the path sweep's finding
                continue  # no error to judge: the requirement that forbids the call reports it
            try:
                document = structured_error(response, profile, label, req="RT-ENV-002", request=request)
            except Exception as exc:  # noqa: BLE001 - a malformed error is one finding, the sweep goes on
                findings.items.extend(getattr(exc, "findings", []))
                continue
            code = error_code(document, profile)
            why = crash(response, document, code)
            if why:  # the server's own failure is no code of the class (RT-ENV-002's finding)
                findings.items.extend(crash_findings(label, why, request, "RT-ERR-001"))
                crashed.add(klass["id"])
                continue
            reason = code
            if reason_field:
                try:
                    reason = json_pointer(document, reason_field)
                except KeyError:
                    findings.fail(f"{label}: the declared reason field {reason_field} is missing", req="RT-ERR-004",
                                  request=request)
            out.setdefault(klass["id"], {})[label] = (code, reason, request)
        if klass["id"] not in out and klass["id"] in crashed:
            findings.block(f"class {klass['id']}: no case gave a structured error, so its code was not seen",
                           req="RT-ERR-001", by="RT-ENV-002")
        elif klass["id"] not in out:
            findings.block(f"class {klass['id']}: no case failed, so its code was not seen", req="RT-ERR-001",
                           by=FORBIDDEN_BY.get(klass["id"], "the calls succeeded"))
    return out


@pytest.mark.req("RT-ERR-001", "RT-ERR-004", "RT-ENV-002")
def test_each_failure_class_gives_one_stable_code_and_the_reasons_differ(server, client, own_servers, fixture_roots,
                                                                         names, profile, suite):
    """Every case of every failure class, on every tool it applies to (the unreadable class on
    a server that cannot bypass file permissions): one code per class, the declared one if
    declared; distinct codes (or reason values) for missing, unreadable and out-of-root."""
    traps = fixture_roots.twin("all")
    trap_server = own_servers.start(traps)
    trap_server.initialize()
    by_server = {False: Calls(trap_server, names, profile), True: None}
    from contract_tests.transport.privileges import unprivileged_prefix
    prefix, why = unprivileged_prefix()
    if prefix is not None:
        locked_server = own_servers.start(fixture_roots.twin("locked"), unprivileged=True)
        locked_server.initialize()
        by_server[True] = Calls(locked_server, names, profile)
    declared = contracts.DECLARATION.get("error_codes", {})
    with Findings() as findings:
        if prefix is None:
            findings.items.append(_blocked(f"the unreadable reason was not checked: {why}", req="RT-ERR-004"))
        seen = _class_codes(profile, lambda k: by_server[bool(k.get("unprivileged"))], traps, findings)
        for klass in profile.data["failure_classes"]:
            cases = seen.get(klass["id"], {})
            codes = {code for code, _reason, _r in cases.values()}
            want = klass.get("code") or declared.get(klass["id"])
            want = [want] if isinstance(want, str) else list(want or [])  # a declaration may list several
            if want:
                for label, (code, _reason, request) in cases.items():
                    findings.check(code in want,
                                   f"{label}: code {esc(code)}, {'fixed' if klass.get('code') else 'declared'} "
                                   f"{' or '.join(want)}", req="RT-ERR-002" if klass.get("code") else "RT-ERR-001",
                                   request=request)
            else:
                findings.check(len(codes) <= 1, f"class {klass['id']} gave {len(codes)} codes: "
                               + "; ".join(f"{esc(c)} for {label}" for label, (c, _r, _q) in list(cases.items())[:4]),
                               req="RT-ERR-001")
        reasons: dict[str, set] = {}
        for klass in profile.data["failure_classes"]:
            if klass.get("reason"):
                reasons.setdefault(klass["reason"], set()).update(r for _c, r, _q in seen.get(klass["id"], {}).values())
        names_ = sorted(reasons)
        for i, a in enumerate(names_):
            for b in names_[i + 1:]:
                shared = reasons[a] & reasons[b]
                findings.check(not shared, f"{a} and {b} attempts give the same "
                               f"{'reason' if contracts.DECLARATION.get('reason_field') else 'code'} {esc(sorted(shared))}; "
                               "the error must tell the reasons apart", req="RT-ERR-004")


def _blocked(message, *, req: str | None = None):
    req = own(req)
    from contract_tests.verdicts.findings import Finding
    return Finding(req, message, kind="blocked")


