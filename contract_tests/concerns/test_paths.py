"""Path attacks, for every profile: the static corpus (policies/path-attacks.yaml) and the
attacks derived from the fixture's own layout, on every path-taking tool and every root, one
sweep per requirement that reports every failing case. Generated paths (hypothesis) too.

What a case must do comes from the profile's `concerns.paths` and an oracle of what its seed
allows: be rejected before any read, fail reading nothing outside the root, or (where the
seed leaves room, e.g. whitespace trimming) succeed reading exactly the allowed item.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from contract_tests.concerns.common import applies as _applies
from contract_tests.concerns.common import render
from contract_tests.contracts import specs as contracts
from contract_tests.contracts.specs import policy
from contract_tests.synthetic import canaries, oracles
from contract_tests.synthetic.corpus import attack_path, no_echo_probes
from contract_tests.transport.stdio import NoResponse, ServerGone, ServerStopped
from contract_tests.verdicts.checks import not_a_failure, structured_error, texts
from contract_tests.verdicts.findings import (
    Finding,
    Findings,
    RequirementFailure,
    asking,
    describe_call,
    esc,
    one_case,
    unanswered,
)

FUZZ = settings(max_examples=100, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _spec(profile: contracts.Profile) -> dict[str, Any]:
    return profile.concerns.get("paths", {})


def _requirement_of(spec: dict[str, Any], category: str) -> str:
    reqs = spec.get("requirements", {})
    return reqs.get(category, reqs.get("*"))


def cases_test_path_attacks_fail(profile):
    spec = _spec(profile)
    if not spec:
        return []
    categories = {e["category"] for e in policy("path-attacks.yaml")["paths"]} | {
        "traversal", "absolute-inside", "symlink"}
    reqs = sorted({_requirement_of(spec, c) for c in categories if _applies(spec, c)})
    others = [r for r in (spec.get("rejected"), _form_requirement(spec)) if r]
    return [([req] + sorted({r for r in others if r != req}), req, req) for req in reqs]


def _form_requirement(spec: dict[str, Any]) -> str | None:
    """The requirement that owns an error's form (`requirements["error-form"]`), if the profile
    gives one: a malformed error is its finding, once, not every path requirement's."""
    return spec.get("requirements", {}).get("error-form")


class Attacker:
    """Sends one path to every path-taking tool on one root and judges the outcome."""

    def __init__(self, profile, fixture, server, names) -> None:
        self.profile, self.fixture, self.server, self.names = profile, fixture, server, names
        self.spec = _spec(profile)
        self.items = set(fixture.items()) if hasattr(fixture, "items") else set()

    def targets(self) -> list[tuple[str, dict[str, Any]]]:
        return [(root, tool) for root in self.fixture.attack_roots() for tool in self.spec["tools"]]

    def case_id(self, entry_id: str, root: str, tool: dict[str, Any]) -> str:
        if len(self.targets()) == 1:
            return entry_id
        return f"{entry_id}@{tool['tool']}:{root}"

    def outcome(self, entry: dict[str, Any], path: Any, root: str | None = None) -> oracles.Outcome:
        oracle = self.spec.get("oracle", "none")
        before = bool(self.spec.get("reject_before_read", oracle not in ("none", "absolute-inside")))
        if oracle == "hosted":
            return oracles.hosted(path)
        if oracle == "absolute-inside":
            inside = {item[len(root) + 1:] for item in self.items if root and item.startswith(root + "/")}
            return oracles.absolute_inside(entry, path, self.fixture.attack_placeholders(root)["vault"], inside,
                                           before_read=before)
        if oracle == "trim" and isinstance(path, str):
            return oracles.trimmed(entry, path, self.items, before_read=before,
                                   declared=contracts.DECLARATION.get("trim_paths"))
        return oracles.corpus(entry, path, before_read=before)

    def send(self, root: str, tool: dict[str, Any], path: Any, *, req: str | None = None,
             case: str | None = None) -> tuple[dict[str, Any], Any, str]:
        """One attack; a call left unanswered is `req`'s finding for `case` (verdicts.asking)."""
        arguments = render(tool.get("arguments", {}), {"root": root})
        arguments[tool["argument"]] = path
        arguments = self.names.args(tool["tool"], arguments)
        request = describe_call(tool["tool"], arguments)
        with self.fixture.reading() as reads, asking(req, case):
            response = self.server.call_tool(tool["tool"], arguments)
        return response, reads, request

    def judge(self, findings: Findings, req: str, case: str, root: str, outcome: oracles.Outcome,
              response: dict[str, Any], reads: Any, request: str) -> None:
        rejected_req = self.spec.get("rejected", req) if outcome.kind == "reject" else req
        problem = not_a_failure(response)
        if problem == "a successful result":
            if outcome.kind != "may-succeed":
                findings.fail("the attack succeeded; it must fail", req=req, case=case, request=request)
                return
            outside = self.fixture.canaries.get("outside")
            if outside and outside in json.dumps(response, ensure_ascii=False):
                findings.fail("the answer carries content from outside the root", req=req, case=case, request=request)
            if reads.seen and outcome.allowed is not None:
                extra = sorted(set(reads.items(root)) - set(outcome.allowed)) + reads.outside(root)
                findings.check(not extra, f"read {esc(extra[:3])}; only {esc(sorted(outcome.allowed))} may be "
                               "read for this path", req=req, case=case, request=request)
            elif reads.seen:
                findings.check(not reads.outside(root), f"read outside the root: {esc(reads.outside(root)[:3])}",
                               req=req,
                               case=case, request=request)
            return
        if problem:
            findings.fail(f"expected a failure, got {problem}", req=rejected_req, case=case, request=request)
            return
        failure = self.spec.get("failure", "any")
        if failure in ("structured", "envelope"):
            form_req = _form_requirement(self.spec) or rejected_req
            with one_case(findings, case, request, req=form_req):
                document = structured_error(response, self.profile, "the attack's error", req=form_req,
                                            request=request, case=case)
                expected = self.spec.get("message") if outcome.kind == "reject" else None
                if expected:
                    message = document.get("error") if isinstance(document, dict) else None
                    findings.check(message == expected, f"the error is {esc(message)}, not "
                                   f"{expected!r}", req=rejected_req, case=case, request=request)
        if not reads.seen:
            return
        if outcome.kind == "reject":
            findings.check(not reads.locations, f"read {esc(reads.locations[:3])} before rejecting the path",
                           req=rejected_req,
                           case=case, request=request)
        else:
            outside = reads.outside(root)
            findings.check(not outside, f"read outside the root: {esc(outside[:3])}", req=req, case=case,
                           request=request)


def all_entries(fixture, root: str) -> list[dict[str, Any]]:
    """The corpus, then the attacks derived from the fixture that the corpus does not already hold."""
    corpus = policy("path-attacks.yaml")["paths"]
    known = {attack_path(e, fixture.attack_placeholders(root)) for e in corpus}
    derived = [e for e in fixture.derived_attacks(root) if e["path"] not in known]
    return corpus + derived


def _entries(profile, fixture, root: str, req: str) -> list[dict[str, Any]]:
    spec = _spec(profile)
    return [e for e in all_entries(fixture, root)
            if _applies(spec, e["category"]) and _requirement_of(spec, e["category"]) == req]


def test_path_attacks_fail(case, profile, attack_fixture, attack_server, names):
    """Every attack of the corpus and of the fixture's layout, on every path tool and root."""
    req = case
    attacker = Attacker(profile, attack_fixture, attack_server, names)
    with Findings() as findings, attack_fixture.watching():
        for root, tool in attacker.targets():
            for entry in _entries(profile, attack_fixture, root, req):
                case_id = attacker.case_id(entry["id"], root, tool)
                if not findings.wants(case_id):
                    continue
                path = attack_path(entry, attack_fixture.attack_placeholders(root))
                response, reads, request = attacker.send(root, tool, path, req=req, case=case_id)
                attacker.judge(findings, req, case_id, root, attacker.outcome(entry, path, root), response, reads,
                               request)


def cases_test_rejected_paths_are_never_echoed(profile):
    req = _spec(profile).get("no_echo")
    return [(req, req, req)] if req else []


def test_rejected_paths_are_never_echoed(case, profile, attack_fixture, attack_server, names):
    """No error repeats the path it refuses (the whole path, or the distinctive part the corpus names)."""
    req = case
    attacker = Attacker(profile, attack_fixture, attack_server, names)
    with Findings() as findings:
        for root, tool in attacker.targets():
            for entry in all_entries(attack_fixture, root):
                if not _applies(attacker.spec, entry["category"]):
                    continue
                case_id = attacker.case_id(entry["id"], root, tool)
                if not findings.wants(case_id):
                    continue
                path = attack_path(entry, attack_fixture.attack_placeholders(root))
                if attacker.outcome(entry, path, root).kind == "may-succeed":
                    continue
                response, _reads, request = attacker.send(root, tool, path)
                if not_a_failure(response):
                    continue  # not a failure: the attack sweep reports it
                decoded = [t for text in _error_strings(response) for t in canaries.strings(text)]
                if _leak_check_owns(profile, attack_fixture, decoded):
                    continue  # an echo carrying the fixture's own path: the error leak check reports it
                echoed = [probe for probe in no_echo_probes(entry, path) if any(probe in text for text in decoded)]
                findings.check(not echoed, "the error echoes the requested path", req=req, case=case_id,
                               request=request)


def _leak_check_owns(profile, fixture, texts: list[str]) -> bool:
    """True when the error carries the fixture's path token and the profile's canary map files
    that as a leak on the errors channel (echoes not allowed there): one echo, one finding."""
    if "errors" in profile.echo_allowed or "path" not in profile.leak_requirements("errors"):
        return False
    return any(canaries.scan_text(text, fixture.canaries, "errors", ("path",)) for text in texts)


def _error_strings(response: dict[str, Any]) -> list[str]:
    if "error" in response:
        error = response["error"]
        return [str(error.get("message", "")), json.dumps(error.get("data", ""), ensure_ascii=False)]
    return texts(response["result"])


SEGMENTS = st.sampled_from(["..", ".", "", "inbox", "example.md", "outside", "secret.md", "vault_evil", "links",
                            "escape-file.md", "escape-dir", "%2e%2e", "\\", "C:", "~", "\x00", " ", "．．", "notes",
                            "docs", "code", "src", "README.md", "guide"])


def cases_test_generated_paths_never_escape_and_never_crash(profile):
    spec = _spec(profile)
    req = spec.get("generated")
    rejected = spec.get("rejected")
    return [([req] + ([rejected] if rejected and rejected != req else []), req, req)] if req else []


def test_generated_paths_never_escape_and_never_crash(case, profile, attack_fixture, attack_server, names):
    req = case
    attacker = Attacker(profile, attack_fixture, attack_server, names)
    root, tool = attacker.targets()[0]
    hosted = attacker.spec.get("oracle") == "hosted"
    others: list = []  # findings under the other cited requirement: kept, never cut the search short
    ended: list = []   # the finding of a generated path the server hung or crashed on: once found, the
    #                    connection sends nothing more, and every later example fails the same way

    @FUZZ
    @given(st.lists(SEGMENTS, min_size=1, max_size=8), st.sampled_from(["/", "\\"]), st.booleans())
    @example(["..", "vault_evil", "secret.md"], "/", False)
    @example(["links", "escape-dir", "secret.md"], "/", False)
    @example(["..", "outside", "secret.md"], "\\", False)
    @example(["..", "code", "src", "main.py"], "/", False)
    def probe(parts, sep, leading):
        path = (sep if leading else "") + sep.join(parts)
        outcome = oracles.hosted(path) if hosted else oracles.Outcome("may-succeed")
        try:
            response, reads, request = attacker.send(root, tool, path, req=req)
        except (NoResponse, ServerGone, ServerStopped) as exc:
            if not ended:
                # No evidence (the server had stopped answering before): blocked, as in the sweep.
                ended.append(_crash(req, exc, path) or Finding(req, str(exc), None, None, "blocked",
                                                               "the run stopped" if isinstance(exc, ServerStopped)
                                                               else "no answer in time"))
            raise RequirementFailure(ended) from None
        findings = Findings()
        if outcome.kind == "may-succeed" and not_a_failure(response) not in (None, "a successful result"):
            findings.fail(f"expected a result or a failure, got {not_a_failure(response)}", req=req, request=request)
        else:
            attacker.judge(findings, req, None, root, outcome, response, reads, request)
        if not_a_failure(response) == "a successful result":
            leaks = canaries.scan_lines([json.dumps(response)], attack_fixture.canaries, "results", ("outside",))
            findings.check(not leaks, "a generated path returned content from outside the root", req=req,
                           request=request)
        others.extend(f for f in findings.items if f.req != req and len(others) < 20)
        mine = [f for f in findings.items if f.req == req]
        if mine:
            raise RequirementFailure(mine)  # hypothesis shrinks to the simplest path that breaks `req`

    try:
        probe()
    except RequirementFailure as failure:
        failure.findings += others
        raise
    if others:
        failure = RequirementFailure(others)
        failure.complete = True  # every generated path was tried: `req` held
        raise failure


def _crash(req: str, exc: Exception, path: str):
    """A generated path the server crashed on, or left unanswered after answering the requests
    before it: `req`'s finding, as in the path sweep (verdicts.unanswered). None otherwise."""
    request = f"path {json.dumps(path, ensure_ascii=True)}"
    if isinstance(exc, NoResponse):
        found = unanswered(exc, req)
        return Finding(req, found.message, None, request) if found else None
    if isinstance(exc, ServerGone) and not exc.earlier:
        return Finding(req, f"the server exited on a generated path ({exc})", request=request)
    return None
