"""Data integrity tier: checksums the suite recomputes, and files changed on disk after
start-up (their modification times kept, so only a checksum can tell) that must never be
served as verified. (Fixture and HOME unchanged: the shared concern tests.)"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from contract_tests.contracts.specs import choice
from contract_tests.open_notebook.common import Found, Session, places, profiles_mark
from contract_tests.open_notebook.conftest import pull
from contract_tests.synthetic.adapter import snapshot, snapshot_diff
from contract_tests.synthetic.notebook_generator import ArtifactInfo
from contract_tests.verdicts.checks import called_ok, short, structured_error, tool_output
from contract_tests.verdicts.findings import Finding, Findings, RequirementFailure, esc, one_case
from contract_tests.verdicts.running import own

pytestmark = [profiles_mark, pytest.mark.data_integrity]
COVERAGES = ("exact_text", "passage_with_context", "notebook_file")


def digest_of(checksum: Any) -> bytes | None:
    """The SHA-256 digest a checksum string encodes: the seed fixes the algorithm (`sha256(data)`,
    `checksum: string`), not the encoding, so bare hex in either case, an `sha256:` (or `sha256-`)
    prefix, and base64 (standard or URL-safe, padded or not) of the 32 bytes are all read."""
    if not isinstance(checksum, str):
        return None
    text = re.sub(r"^sha-?256[:-]", "", checksum.strip(), flags=re.IGNORECASE)
    if re.fullmatch(r"[0-9a-fA-F]{64}", text):
        return bytes.fromhex(text)
    try:
        raw = base64.b64decode(text.replace("-", "+").replace("_", "/") + "=" * (-len(text) % 4), validate=True)
    except ValueError:
        return None
    return raw if len(raw) == 32 else None


def _digests(body: dict[str, Any], notebooks, role: str) -> dict[str, bytes]:
    """What each coverage the profile accepts hashes to, for one fetch_passage body."""
    passage, provenance = body.get("passage") or {}, body.get("provenance") or {}
    exact, before, after = (str(passage.get(k) or "") for k in ("exact_text", "context_before", "context_after"))
    out = {"exact_text": hashlib.sha256(exact.encode("utf-8")).digest(),
           "passage_with_context": hashlib.sha256((before + exact + after).encode("utf-8")).digest()}
    notebook = notebooks.collection(role).notebooks.get(provenance.get("notebook_id"))
    if notebook is not None:
        out["notebook_file"] = hashlib.sha256(notebook.text.encode("utf-8")).digest()
    return out


def _coverages(body: dict[str, Any], notebooks, role: str) -> set[str]:
    """The coverages (COVERAGES) one fetch_passage body's checksum is the SHA-256 of."""
    digest = digest_of((body.get("integrity") or {}).get("checksum"))
    return {name for name, d in _digests(body, notebooks, role).items() if d == digest}


@pytest.mark.req("ON-PASS-004")
def test_the_passage_checksum_is_the_sha256_of_what_it_covers(main, notebooks):
    """Each passage on its own (the declared coverage, if declared); that every passage's
    checksum covers the same thing is ON-PASS-010's."""
    main.enter("active")
    declared = choice("passage_checksum")
    fetched = main.fetched_all([p.exact_text for p in notebooks.collection("active").passages if p.kind != "canary"],
                               k=3)
    with Findings() as findings:
        for _result, body, request in fetched:
            integrity = body.get("integrity") or {}
            checksum = integrity.get("checksum")
            matched = _coverages(body, notebooks, "active")
            case = str(body.get("source_id"))
            if declared:
                findings.check(declared in matched, f"the checksum is not the SHA-256 of {declared} "
                               f"(declared); it matches {sorted(matched) or 'none of ' + str(list(COVERAGES))}",
                               case=case, request=request)
            else:
                findings.check(matched, f"the checksum {esc(checksum, 70)} is the SHA-256 of none of "
                               f"{list(COVERAGES)} (hex, sha256:hex or base64)", case=case, request=request)
            findings.check(integrity.get("verified") is True, "verified is not true on an unchanged "
                           "fixture", case=case, request=request)


@pytest.mark.req("ON-PASS-010")
def test_every_passage_checksum_covers_the_same_thing(walk, notebooks):
    """A test of its own, on the passages the tour fetched: the profile's reading never stops the
    seed's ON-PASS-004. With a declaration the one coverage is the declared one."""
    declared = choice("passage_checksum")
    matched = {}
    for _tool, _args, response in walk.successes("fetch_passage"):
        try:
            body = tool_output(response)
        except RequirementFailure:
            continue  # not a JSON body: ON-SHAPE-001's finding
        if isinstance(body, dict) and _coverages(body, notebooks, "active"):
            matched[str(body.get("source_id"))] = _coverages(body, notebooks, "active")
    with Findings() as findings:
        if len(matched) < 2:
            findings.block("fewer than two fetched passages carry a checksum of a coverage the "
                           f"profile accepts (see ON-PASS-004{', ' + walk.blocker if walk.blocker else ''})",
                           by="ON-PASS-004")
            return
        kinds = {}
        for source, found in matched.items():
            kinds.setdefault(" or ".join(sorted(found)), []).append(source)
        common = set.intersection(*matched.values())
        findings.check(common, "the checksums do not all cover the same "
                       f"thing: {short({k: len(v) for k, v in kinds.items()})} passages")
        if declared:
            findings.check(declared in common, f"the declared coverage {declared} is not what every checksum covers "
                           f"(common: {sorted(common) or 'none'})")


@dataclass
class Tampered:
    session: Session | None = None
    passage: Found | None = None
    original: str = ""
    artifacts: list[tuple[str, ArtifactInfo]] = field(default_factory=list)
    # Why a step of the set-up could not be done, by what it would have checked: a test
    # reports these as blocked, never runs on a half-filled state.
    blockers: dict[str, Finding] = field(default_factory=dict)

    def retrieved(self) -> list[tuple[str, dict[str, Any], str]]:
        """retrieve_artifact of each changed artifact: (wire id, response, request)."""
        return [(wire, *self.session.raw("retrieve_artifact", {"artifact_id": wire})) for wire, _ in self.artifacts]

    def block_if_unset(self, needed: Any, step: str | None = None, *, req: str | None = None) -> None:
        """Block `req` when the set-up `step` (default: req) left `needed` unset."""
        req = own(req)
        if not needed:
            cause = self.blockers.get("enter") or self.blockers.get(step or req)
            raise RequirementFailure([Finding(req, cause.message if cause else "the set-up found nothing to check",
                                              None, cause.request if cause else None, "blocked",
                                              cause.by if cause else None)])


def _caught(state: Tampered, key: str, step) -> None:
    try:
        step()
    except RequirementFailure as failure:  # kept for the tests: a fixture that raises would run them without it
        state.blockers[key] = next((f for f in failure.findings if f.kind == "blocked"), None) or \
            Finding(key, failure.findings[0].message, None, failure.findings[0].request, "blocked", "set-up")


@pytest.fixture(scope="module")
def tampered(own_servers, profile, notebooks, tmp_path_factory):
    """A private fixture and a server started on it; the long-context passage and the
    artifacts are looked up, then their files change on disk."""
    if notebooks.imported:
        pytest.skip("the server reads the store its load command filled; the suite cannot change what it serves")
    fixture = type(notebooks).build(profile, tmp_path_factory.mktemp("tamper"), notebooks.settings)
    conn = own_servers.start(fixture)
    conn.initialize()
    state = Tampered(Session(conn, profile, fixture))
    passage = fixture.collection("active").passage("long_context")

    def find_passage():
        state.passage = state.session.find("active", passage, req="ON-PASS-007")
        state.original = state.passage.body["passage"]["exact_text"]

    def find_artifacts():
        mapped = state.session.artifact_map("active", req="ON-ART-007").items()
        for set_id in ("summaries", "term-extractions"):  # a Markdown and a JSON artifact
            state.artifacts += [(w, a) for w, a in mapped if a.artifact_set_id == set_id][:1]
    _caught(state, "enter", lambda: state.session.enter("active", req="ON-ART-007"))
    if "enter" not in state.blockers:
        _caught(state, "ON-PASS-007", find_passage)
        _caught(state, "ON-ART-007", find_artifacts)
    if state.passage is not None:  # the passage served (a stand-in if search did not find this one)
        served = state.passage.text if not state.passage.exact else passage.exact_text
        holders = sorted(str(n) for n, _p in places(fixture, "active", state.passage, passage)
                         if n in fixture.collection("active").notebooks)
        if holders:  # else the text served is not the fixture's: ON-PASS-001's finding
            notebook = fixture.notebook("active", holders[0])
            fixture.tamper(notebook.path, notebook.text.replace(served, served.swapcase()).encode())
    for _wire, artifact in state.artifacts:
        data = (fixture.notebooks / artifact.contents_path).read_bytes()
        fixture.tamper(artifact.contents_path, data.replace(b"e", b"E"))
    yield state
    conn.close(timeout=3)
    fixture.close()


@pytest.mark.req("ON-PASS-007")
def test_a_changed_notebook_is_never_served_as_verified(tampered):
    tampered.block_if_unset(tampered.passage)
    response, request = tampered.session.raw("fetch_passage", {"source_id": tampered.passage.source_id})
    with Findings() as findings:
        if not called_ok(response):
            return  # refused: never served as verified
        body = tool_output(response)
        exact = (body.get("passage") or {}).get("exact_text")
        verified = (body.get("integrity") or {}).get("verified")
        findings.check(exact == tampered.original or verified is False,
                       f"changed text served with verified {short(verified)}: {esc(exact, 80)}", request=request)


def _verified_values(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [v for k, v in value.items() if k == "verified"] + [x for v in value.values() for x in _verified_values(v)]
    if isinstance(value, list):
        return [x for v in value for x in _verified_values(v)]
    return []


@pytest.mark.req("ON-ART-007")
def test_a_changed_artifact_is_never_served_as_verified(tampered, profile):
    """Each changed artifact on its own (the declared way, if declared); that all are reported
    one way is ON-ART-011's."""
    declared = choice("tamper_report")
    tampered.block_if_unset(tampered.artifacts)
    with Findings() as findings:
        for wire, response, request in tampered.retrieved():
            if not called_ok(response):
                outcome = "error"
                with one_case(findings, wire, request):
                    structured_error(response, profile, "a changed artifact", request=request, case=wire)
            else:
                outcome = "unverified"
                flags = _verified_values(tool_output(response))
                findings.check(False in flags and True not in flags,
                               f"a changed artifact was served with verified flags {flags or 'none'}", case=wire,
                               request=request)
            if declared:
                findings.check(outcome == declared, f"reported as {outcome}, the "
                               f"declaration says {declared}", case=wire, request=request)


@pytest.mark.req("ON-ART-011")
def test_every_changed_artifact_is_reported_one_way(tampered):
    """A test of its own: the profile's reading never stops the seed's ON-ART-007. With a
    declaration the one way is the declared one: every changed artifact is reported so."""
    declared = choice("tamper_report")
    tampered.block_if_unset(tampered.artifacts[1:], step="ON-ART-007")  # two to compare
    outcomes = {wire: "unverified" if called_ok(response) else "error" for wire, response, _ in tampered.retrieved()}
    with Findings() as findings:
        findings.check(len(set(outcomes.values())) <= 1, f"reported two ways: {outcomes}")
        if declared:
            findings.check(set(outcomes.values()) <= {declared}, f"reported {outcomes}, the declaration says "
                           f"{declared}")


@pytest.mark.req("ON-RO-001")
def test_every_tool_leaves_the_fixture_unchanged(own_servers, profile, notebooks, tmp_path_factory):
    """A private fixture, snapshotted before its server starts and after a tour of all eleven
    tools (what the shared sweep cannot reach: fetches, artifacts, provenance, a whole
    stream) and of mutation attempts: bytes and modification times must not move."""
    fixture = type(notebooks).build(profile, tmp_path_factory.mktemp("tour"), notebooks.settings)
    before = snapshot(fixture.root)
    conn = own_servers.start(fixture)
    conn.initialize()
    session = Session(conn, profile, fixture)

    def tour():
        for tool in ("describe_world", "list_collections", "list_constraints", "list_artifact_sets"):
            session.raw(tool, {})
        for _result, body, _request in session.fetched(fixture.collection("active").passage("probe").exact_text):
            session.raw("explain_provenance", {"id": body.get("source_id"), "id_type": "source"})

    def artifacts():
        for wire in session.artifact_map("active"):
            session.raw("retrieve_artifact", {"artifact_id": wire})
            session.raw("explain_provenance", {"id": wire, "id_type": "artifact"})

    def stream():
        begun, _ = session.raw("begin_result_stream", {"query": "kelp"})
        if called_ok(begun):
            pull(session, str(tool_output(begun).get("stream_token")))
    try:
        session.enter("active")  # not entered: the tour reaches nothing, blocked
        for step in (tour, artifacts, stream):  # a step that fails is another check's finding
            try:
                step()
            except RequirementFailure:
                continue
        for tool, args in (("write_notebook", {"notebook_id": "nb-0001", "text": "x"}),
                           ("delete_notebook", {"notebook_id": "nb-0001"}),
                           ("fetch_passage", {"source_id": "x", "replace_with": "x"})):
            session.raw(tool, args)
    finally:
        conn.close(timeout=5)
    changes = snapshot_diff(before, snapshot(fixture.root))
    fixture.close()
    with Findings() as findings:
        findings.check(not changes, f"{len(changes)} change(s) to the fixture: {changes[:5]}")
