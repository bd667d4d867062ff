"""Security tier: the attack corpus, excluded output, blocked surfaces, canaries, fuzzing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from contract_tests.checks import check, error_texts, fail, keys_of, result_of, schema_errors, short, tool_output
from contract_tests.harness import canaries, fsevents
from contract_tests.harness.stdio import NoResponse, ServerGone
from contract_tests.harness.vault import PROMPT_INJECTION_HEADINGS
from contract_tests.harness.corpus import attack_path, no_echo_probes
from contract_tests.section_source.common import (TOOL, attacks, blocked, blocked_tools, body_free_tools,
                                                   forbidden, listed_tools, profiles_mark)

pytestmark = [profiles_mark, pytest.mark.security]

CATEGORY_REQ = {"absolute": "SSL-IN-004", "windows": "SSL-IN-004", "traversal": "SSL-IN-005",
                "backslash": "SSL-IN-005", "symlink": "SSL-IN-006", "sibling-prefix": "SSL-IN-006"}
FUZZ = settings(max_examples=120, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _corpus_params():
    params = []
    for entry in attacks()["paths"]:
        reqs = ["SSL-IN-007"] + ([CATEGORY_REQ[entry["category"]]] if entry["category"] in CATEGORY_REQ else [])
        params.append(pytest.param(entry, id=entry["id"], marks=pytest.mark.req(*reqs)))
    return params


def _opened_during(fixture_vault, call):
    if not fsevents.available():
        return call(), None
    with fsevents.OpenWatcher(fixture_vault.root) as watcher:
        response = call()
        return response, watcher.opened()


@pytest.mark.parametrize("entry", _corpus_params())
def test_the_attack_corpus_fails_without_reading(server, client, fixture_vault, entry):
    req = "SSL-IN-007" if entry["category"] not in CATEGORY_REQ else CATEGORY_REQ[entry["category"]]
    path = attack_path(entry, fixture_vault.placeholders())
    response, opened = _opened_during(fixture_vault, lambda: server.call_tool(TOOL, {"path": path}))
    error_texts(response, req, f"attack {entry['id']}")
    if opened is None:
        return
    vault = fixture_vault.vault
    if entry["expect"] == "reject":
        names = sorted(str(p.relative_to(fixture_vault.root)) for p in opened)
        check(not names, req, f"attack {entry['id']} was not rejected before reading: opened {names[:3]}")
    else:
        outside = sorted(str(p.relative_to(fixture_vault.root)) for p in opened
                         if p != vault and vault not in p.parents)
        check(not outside, req, f"attack {entry['id']} opened files outside the vault: {outside[:3]}")


@pytest.mark.req("SSL-ERR-005")
def test_errors_never_echo_the_unsafe_path(server, client, fixture_vault):
    for entry in attacks()["paths"]:
        path = attack_path(entry, fixture_vault.placeholders())
        texts = error_texts(server.call_tool(TOOL, {"path": path}), "SSL-IN-007", f"attack {entry['id']}")
        for text in texts:
            decoded = list(canaries.strings(text))
            for probe in no_echo_probes(entry, path):
                if any(probe in t for t in decoded):
                    fail("SSL-ERR-005", f"attack {entry['id']}: the error echoes the requested path")


@pytest.mark.req("SSL-IN-003")
@pytest.mark.parametrize("entry", attacks()["arguments"], ids=[e["id"] for e in attacks()["arguments"]])
def test_malformed_or_extra_arguments_are_refused(server, client, entry):
    error_texts(server.call_tool(TOOL, entry["arguments"]), "SSL-IN-003", f"arguments {entry['id']}")


def _value_patterns():
    return [(p["id"], re.compile(p["pattern"])) for p in forbidden()["forbidden_value_patterns"]]


@pytest.mark.req("SSL-ERR-004")
def test_errors_carry_no_content_frontmatter_or_absolute_paths(server, client, fixture_vault):
    requests = [attack_path(e, fixture_vault.placeholders()) for e in attacks()["paths"]]
    requests += ["inbox/missing.md", fixture_vault.stress["cap_over"]]
    for path in requests:
        response = server.call_tool(TOOL, {"path": path})
        if result_of(response) is not None and not response["result"].get("isError"):
            continue
        for text in error_texts(response, "SSL-ERR-004", "error"):
            for pid, pattern in _value_patterns():
                check(not pattern.search(text), "SSL-ERR-004", f"an error message matches {pid}: {short(text, 80)}")
            leaks = canaries.scan_text(text, fixture_vault.canaries, "error", ("body", "code", "frontmatter", "path", "outside"))
            check(not leaks, "SSL-ERR-004", f"an error carries private content: {leaks[0] if leaks else ''}")


@pytest.fixture(scope="module")
def every_output(client, fixture_vault, profile):
    outputs = []
    for name in body_free_tools(client, profile):
        for path in fixture_vault.notes:
            outputs.append((name, path, tool_output(client.call_tool(name, {"path": path}), "SSL-OUT-007")))
    return outputs


@pytest.mark.req("SSL-OUT-007")
def test_no_excluded_field_appears_in_any_result(every_output, profile):
    banned = set(forbidden()["forbidden_keys"])
    for name, path, out in every_output:
        keys = keys_of(out) & banned
        check(not keys, "SSL-OUT-007", f"{name}({path}) returned excluded fields {sorted(keys)}")
        if name in profile.data["schemas"]["outputs"]:
            errors = schema_errors(profile.output_validator(name), out)
            check(not errors, "SSL-OUT-007", f"{name}({path}) violates its allowlist: {errors[:2]}")


def _non_heading_strings(out) -> list[str]:
    return [str(out.get(k)) for k in ("schema", "path") if k in out]


@pytest.mark.req("SSL-RES-002")
def test_no_resource_uri_appears_in_any_output(every_output):
    uri = re.compile(next(p["pattern"] for p in forbidden()["forbidden_value_patterns"] if p["id"] == "resource-uri"))
    for name, path, out in every_output:
        keys = keys_of(out) & {"uri", "resource_uri", "resourceUri"}
        check(not keys, "SSL-RES-002", f"{name}({path}) has URI fields {sorted(keys)}")
        for text in _non_heading_strings(out):
            check(not uri.search(text), "SSL-RES-002", f"{name}({path}) returns a URI: {short(text, 60)}")


@pytest.mark.req("SSL-BLK-001")
def test_no_blocked_tool_is_listed(client, profile):
    problems = blocked_tools(listed_tools(client), profile)
    check(not problems, "SSL-BLK-001", "; ".join(problems))


@pytest.mark.req("SSL-BLK-002")
def test_no_prompt_exposes_section_sources(client):
    if "prompts" not in client.capabilities:
        pytest.skip("server does not declare prompts")
    patterns = blocked()["prompts"]["forbidden_patterns"]
    for prompt in client.list_prompts():
        text = f"{prompt.get('name', '')} {prompt.get('description', '')}"
        hits = [p for p in patterns if re.search(p, text, re.IGNORECASE)]
        check(not hits, "SSL-BLK-002", f"prompt {prompt.get('name')} matches {hits}")


SWEEP_REQS = {"SSL-SEC-001": ("body", "code"), "SSL-SEC-002": ("frontmatter",), "SSL-SEC-003": ("path",)}


@pytest.mark.parametrize("req", [pytest.param(r, marks=pytest.mark.req(r), id=r) for r in SWEEP_REQS])
def test_no_private_content_in_any_output(client, every_output, fixture_vault, req):
    """Every tool on every note, then the whole stdout of the session, scanned for one canary class."""
    leaks = canaries.scan_lines(client.server.transcript.stdout, fixture_vault.canaries, "stdout", SWEEP_REQS[req])
    check(not leaks, req, f"output leaked: {leaks[0] if leaks else ''}")


@pytest.mark.req("SSL-LOG-001")
def test_log_lines_carry_no_content_or_absolute_paths(server, client, every_output, fixture_vault):
    for path in ("inbox/missing.md", "../outside/secret.md", "links/escape-file.md"):
        server.call_tool(TOOL, {"path": path})
    leaks = canaries.scan_lines(server.transcript.stderr, fixture_vault.canaries, "stderr",
                                ("body", "code", "frontmatter", "path", "outside"))
    check(not leaks, "SSL-LOG-001", f"a log line leaked: {leaks[0] if leaks else ''}")


@pytest.mark.req("SSL-SEC-004")
def test_prompt_injection_headings_come_back_as_inert_text(client, profile):
    out = tool_output(client.call_tool(TOOL, {"path": "notes/injection.md"}), "SSL-SEC-004")
    check(not schema_errors(profile.output_validator(TOOL), out), "SSL-SEC-004", "output violates the allowlist")
    texts = [s["heading_text"] for s in out["sections"]]
    check(texts == list(PROMPT_INJECTION_HEADINGS), "SSL-SEC-004", f"headings not returned verbatim: {short(texts)}")
    check(all(s["body_returned"] is False and s["snippet_returned"] is False for s in out["sections"]),
          "SSL-SEC-004", "an injection heading changed the body flags")


SEGMENTS = st.sampled_from(["..", ".", "", "inbox", "example.md", "outside", "secret.md", "vault_evil", "links",
                            "escape-file.md", "escape-dir", "%2e%2e", "\\", "C:", "~", "\x00", " ", "．．", "notes"])


@pytest.mark.req("SSL-IN-008")
def test_generated_paths_never_escape_and_never_crash(server, client, fixture_vault):
    vault = fixture_vault.vault

    @FUZZ
    @given(st.lists(SEGMENTS, min_size=1, max_size=8), st.sampled_from(["/", "\\"]), st.booleans())
    @example(["..", "vault_evil", "secret.md"], "/", False)
    @example(["links", "escape-dir", "secret.md"], "/", False)
    @example(["..", "outside", "secret.md"], "\\", False)
    def probe(parts, sep, leading):
        path = (sep if leading else "") + sep.join(parts)
        try:
            response = server.call_tool(TOOL, {"path": path})
        except (NoResponse, ServerGone) as exc:
            fail("SSL-IN-008", f"server stopped answering on a generated path ({exc})")
        result = result_of(response)
        if result is None or result.get("isError"):
            error_texts(response, "SSL-IN-008", "generated path")
            return
        out = tool_output(response, "SSL-IN-008")
        real = Path(vault, out["path"]).resolve()
        check(real == vault.resolve() or vault.resolve() in real.parents, "SSL-IN-008",
              "a generated path gave a result for a file outside the vault")
        leaks = canaries.scan_lines([json.dumps(out)], fixture_vault.canaries, "stdout", ("outside",))
        check(not leaks, "SSL-IN-008", "a generated path returned outside content")

    probe()


HEADING = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=30)
BLOCK = st.one_of(
    st.builds(lambda lvl, t: "#" * lvl + " " + t, st.integers(1, 7), HEADING),
    st.builds(lambda t: t + "\n" + "=" * 3, HEADING),
    st.just("```\n# not a heading {body}\n```"),
    st.just("> quoted {body}"), st.just("- item {body}"), st.just("para {body} text"),
    st.just("    code {body}"), st.just("---"), st.just("<div>{body}</div>"),
)


@pytest.mark.req("SSL-SEC-005")
def test_generated_markdown_gives_allowlisted_body_free_output(client, fixture_vault, profile):
    validator = profile.output_validator(TOOL)
    token = fixture_vault.canaries["body"]
    counter = iter(range(1_000_000))

    @FUZZ
    @given(st.lists(BLOCK, max_size=12))
    def probe(blocks):
        path = f"generated/note-{next(counter)}.md"
        fixture_vault.write(path, "\n\n".join(blocks).replace("{body}", token) + "\n", note=False)
        out = tool_output(client.call_tool(TOOL, {"path": path}), "SSL-SEC-005")
        errors = schema_errors(validator, out)
        check(not errors, "SSL-SEC-005", f"generated note: output violates the allowlist: {errors[:2]}")
        check(token not in json.dumps(out).lower(), "SSL-SEC-005", "generated note: body text in output")

    probe()

