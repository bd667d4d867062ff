"""`--mapping auto` tries its own proposal before the sweep: a guess of the suite's is never a
finding against the server.

The proposal says which tools read, list, search or stat, and whether paths are root-relative or
absolute; tools/list cannot show whether a server resolves a relative path against its root or
against its working directory (the suite starts a server in a private, empty home, so the second
finds nothing there). So each path form is tried with a plain call of each tool, inside the root,
on a server of the suite's own: the forms the server serves are kept, a tool no form serves is
left out with the reason, and when nothing is served the run stops with what was tried and asks
for a mapping (a usage error, exit 4), never GF-TOOL-001's failure."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from contract_tests.generic_files.sweep import broken_tools, plain_calls
from contract_tests.synthetic.fixtures import build_for

FORMS = ("relative", "absolute")


class TrialFailed(Exception):
    """No path form of the proposal was served by any mapped tool: the message says what was tried."""


def try_proposal(state: Any, proposed: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The proposal with the path forms (and tools) the server serves, and notes saying what the
    trial found; TrialFailed when no tool serves a plain call in either form."""
    from contract_tests.implementation.sessions import connect
    broken: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="rc-auto-trial-") as tmp:
        fixture = build_for(state.profile, Path(tmp) / "fixture", state.fixture_settings())
        home = Path(tmp) / "home"
        home.mkdir()
        server = connect(state, fixture, home)
        try:
            server.initialize(state.protocol_version)
            listing = server.request("tools/list", {}).get("result") or {}
            listed = [t.get("name") for t in listing.get("tools", []) if isinstance(t, dict)]
            for form in FORMS:
                broken[form] = broken_tools(plain_calls(server, fixture, proposed, form), listed, fixture)
        finally:
            server.close(timeout=5)
            close = getattr(fixture, "close", None)
            if close:
                close()
    return decide(proposed, broken)


def decide(proposed: dict[str, Any], broken: dict[str, dict[str, str]]) -> tuple[dict[str, Any], list[str]]:
    """From each form's broken tools (tool -> why), the mapping to sweep with and the notes."""
    names = [t["name"] for t in proposed["tools"]]
    served = [form for form in FORMS if not broken[form]]
    wanted = FORMS if proposed["paths"] == "both" else (proposed["paths"],)
    notes = [f"trial: a plain call of each tool with {form} paths: "
             + ("served by every tool" if form in served else
                "; ".join(f"{name}: {why}" for name, why in broken[form].items()))
             for form in FORMS]
    if served:
        # Every form the server serves is swept, whatever the proposal read in the descriptions
        # (a sentence about globs is no statement that absolute paths are refused).
        paths = "both" if len(served) == 2 else served[0]
        if paths != proposed["paths"]:
            notes.append(f"trial: paths {proposed['paths']} proposed, {paths} kept (the forms the server serves)")
        return {**proposed, "paths": paths}, notes
    # No form served by every tool: the form most tools serve, without the tools it does not.
    best = min(FORMS, key=lambda f: (len(broken[f]), FORMS.index(f) if f in wanted else 2))
    kept_tools = [t for t in proposed["tools"] if t["name"] not in broken[best]]
    if not kept_tools:
        tried = "\n".join(f"  {form} paths: " + "; ".join(f"{name}: {broken[form].get(name, 'served')}"
                                                          for name in names) for form in FORMS)
        raise TrialFailed("--mapping auto: the proposed mapping was tried before the sweep, and no mapped tool "
                          f"served a plain call inside the root in either path form:\n{tried}\n"
                          "The suite's guess is not a finding against the server: write a mapping "
                          "(schemas/mapping.schema.json; `retrieval-contract map` drafts one) and run with "
                          "--mapping FILE.")
    for name in names:
        if name in broken[best]:
            notes.append(f"trial: {name} left out: it served no plain call in either form ({broken[best][name]})")
    return {**proposed, "paths": best, "tools": kept_tools}, notes
