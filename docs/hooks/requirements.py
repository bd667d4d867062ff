"""MkDocs hook: the requirements and policy pages, generated from specs/ and policies/.

The contracts are data; these pages are rendered from that data on every build, so the site
cannot drift from what the suite checks. Registered in mkdocs.yml under `hooks:`.

- on_config: adds the generated pages to the "Requirements" and "Policies" nav sections.
- on_files: adds requirements/index.md, requirements/<spec-id>.md for every specs/*.yaml,
  policies/index.md and policies/<name>.md for every policies/*.yaml.
- on_files also adds sentences/index.md and sentences/<profile>.md: per profile, every sentence of
  its seed and of the documents the seed builds on that a requirement quotes (with the ids that
  check it), and every sentence listed as not testable (with the reason).
- on_page_markdown: fills the mutants table in contracts.md from the mutant registry (each
  mutant declares its profile and the ids it must trip beside its patch, tests/mutants/).
"""

from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from mkdocs.exceptions import PluginError
from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import File

log = get_plugin_logger(__name__)

TIERS = ("unit", "integration", "e2e", "stress", "data_integrity", "performance", "security")
STRENGTHS = ("MUST", "SHOULD", "MAY")
REQ_ID = re.compile(r"\b[A-Z]+(?:-[A-Z0-9]+)+-[0-9]{3}\b")
MUTANTS_START, MUTANTS_END = "<!-- mutants:start -->", "<!-- mutants:end -->"


# --- loading -----------------------------------------------------------------------------

def _root(config) -> Path:
    return Path(config.config_file_path).resolve().parent


def _load_specs(root: Path) -> list[dict[str, Any]]:
    specs = []
    for path in sorted((root / "specs").glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise PluginError(f"requirements hook: cannot read {path.name}: {exc}") from exc
        if not isinstance(data, dict) or not data.get("id") or not isinstance(data.get("requirements"), list):
            raise PluginError(f"requirements hook: specs/{path.name} has no id or no requirements list")
        data["_file"] = f"specs/{path.name}"
        specs.append(data)
    if not specs:
        raise PluginError("requirements hook: no specs/*.yaml found")
    # The base protocol first, then profiles, each by id.
    return sorted(specs, key=lambda s: (s.get("kind") != "base", s["id"]))


def _policy_files(root: Path) -> list[Path]:
    return sorted((root / "policies").glob("*.yaml"))


def _leading_comment(text: str) -> str:
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:].removeprefix(" "))
    return "\n".join(lines).strip()


# --- small renderers ---------------------------------------------------------------------

def _cell(text: Any) -> str:
    """Text safe inside a Markdown table cell."""
    return html.escape(str(text), quote=False).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _anchor(req_id: str) -> str:
    return req_id.lower()


def _source_link(spec: dict[str, Any], req: dict[str, Any]) -> str:
    if req.get("section"):
        return f"seed: {_cell(req['section'])}"
    source = str(req.get("source", ""))
    if re.match(r"^https?://", source):
        short = re.sub(r"^https?://", "", source)
        return f"[{_cell(short)}]({source})"
    key, _, fragment = source.partition("#")
    base = (spec.get("sources") or {}).get(key)
    if base:
        return f"[{_cell(source)}]({base}{'#' + fragment if fragment else ''})"
    return _cell(source)


def _basis_cell(req: dict[str, Any]) -> str:
    basis = req.get("basis", "")
    return f"{basis} (advisory)" if basis == "profile" else basis


def _basis_text(spec: dict[str, Any], req: dict[str, Any]) -> str:
    """The seed's quoted words (with its section), the MCP spec's link and words, or the
    profile's reason for its reading."""
    quote = req.get("quote") or []
    quote = [quote] if isinstance(quote, str) else quote
    quoted = "<br>".join(f"“{_cell(q)}”" for q in quote)
    if req.get("basis") == "seed":
        where = req.get("document") or spec.get("seed", "")
        return f"{quoted}<br><em>{_cell(where)}{', ' + _cell(req['section']) if req.get('section') else ''}</em>"
    if req.get("basis") == "mcp":
        return (quoted + "<br>" if quoted else "") + _source_link(spec, req)
    return f"<em>{_cell(req.get('reading', ''))}</em>"


def _counts(reqs: list[dict[str, Any]]) -> tuple[Counter, Counter]:
    tiers = Counter(t for r in reqs for t in r.get("tiers", []))
    strengths = Counter(r.get("strength") for r in reqs)
    return tiers, strengths


def _family(req_id: str) -> str:
    return req_id.rsplit("-", 1)[0]


# --- requirements pages ------------------------------------------------------------------

_PROOFS: dict[str, dict[str, list[str]]] = {}


def _proofs(root: Path) -> dict[str, dict[str, list[str]]]:
    """Requirement id -> {"tests": the suite tests citing it, "mutants": the mutants that must
    trip it}, from `retrieval-contract list` (collection) and the mutant registry."""
    if _PROOFS:
        return _PROOFS
    import json
    import subprocess
    import sys
    profiles = [p.stem for p in sorted((root / "specs").glob("*.yaml"))
                if (yaml.safe_load(p.read_text(encoding="utf-8")) or {}).get("kind") == "profile"]
    for profile in profiles:
        out = subprocess.run([sys.executable, "-m", "contract_tests.cli", "list", "--profile", profile, "--format",
                              "json"], capture_output=True, text=True, cwd=root, timeout=300)
        if out.returncode != 0:
            raise PluginError(f"requirements hook: listing {profile}'s tests failed: {out.stderr[-300:]}")
        for row in json.loads(out.stdout):
            entry = _PROOFS.setdefault(row["id"], {"tests": [], "mutants": []})
            for test in row["tests"]:
                name = test.split("[")[0]
                if name not in entry["tests"]:
                    entry["tests"].append(name)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from tests.mutants import registry
    for name, m in sorted(registry().items()):
        for req in m.trips:
            _PROOFS.setdefault(req, {"tests": [], "mutants": []})["mutants"].append(name)
    return _PROOFS


def _proved_by(req_id: str, root: Path) -> str:
    proof = _proofs(root).get(req_id, {"tests": [], "mutants": []})
    tests = "<br>".join(f"<code>{_cell(t)}</code>" for t in proof["tests"]) or "<em>no test</em>"
    mutants = ", ".join(f"`{m}`" for m in proof["mutants"])
    return tests + (f"<br>caught: {mutants}" if mutants else "")


def _spec_page(spec: dict[str, Any], specs: list[dict[str, Any]], root: Path, guide: bool) -> str:
    reqs = spec["requirements"]
    known = {s["id"] for s in specs}
    out = [f"# {spec.get('title', spec['id'])}", "",
           f"Generated from `{spec['_file']}` when the site is built. Change that file, not this page.", ""]
    if guide:
        out += [f"The [profile guide](../profiles/{spec['id']}.md) explains this profile in prose.", ""]

    facts = [("id", f"`{spec['id']}`"), ("kind", spec.get("kind", ""))]
    if spec.get("seed"):
        where = "" if (root / spec["seed"]).is_file() else " (kept outside this repository)"
        facts.append(("seed", f"`{spec['seed']}`{where}"))
    if spec.get("includes"):
        facts.append(("includes", ", ".join(
            f"[{i}]({i}.md)" if i in known else f"`{i}`" for i in spec["includes"])))
    included_by = [s["id"] for s in specs if spec["id"] in (s.get("includes") or [])]
    if included_by:
        facts.append(("included by", ", ".join(f"[{i}]({i}.md)" for i in included_by)))
    if spec.get("transports"):
        facts.append(("transports", ", ".join(spec["transports"])))
    facts.append(("requirements", str(len(reqs))))
    out += ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in facts] + [""]

    tiers, strengths = _counts(reqs)
    out += ["## Counts", "",
            "A requirement can belong to more than one tier.", "",
            "| tier | requirements |", "|---|---:|"]
    out += [f"| {t} | {tiers.get(t, 0)} |" for t in TIERS]
    out += ["", "| strength | requirements |", "|---|---:|"]
    out += [f"| {s} | {strengths.get(s, 0)} |" for s in STRENGTHS] + [""]

    if spec.get("kind") == "profile":
        out += _profile_data(spec)

    if spec.get("protocol"):
        out += ["## Protocol versions", "", "| key | value |", "|---|---|"]
        for key, value in spec["protocol"].items():
            shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            out.append(f"| {_cell(key)} | {_cell(shown)} |")
        out.append("")

    out += ["## Requirements", "",
            "Suite tests cite these ids with `@pytest.mark.req(...)`; failures and reports name them.", ""]
    families: dict[str, list[dict[str, Any]]] = {}
    for req in reqs:
        families.setdefault(_family(req["id"]), []).append(req)
    for family, items in families.items():
        out += [f"### {family}", "",
                "| id | tiers | basis | behavior | the seed's words, the MCP spec, or our reading | proved by |",
                "|---|---|---|---|---|---|"]
        for req in items:
            behavior = _cell(req.get("behavior", ""))
            notes = []
            if req.get("applies_when"):
                notes.append(f"Applies when: {_cell(req['applies_when'])}.")
            if req.get("transports"):
                notes.append(f"Transports: {', '.join(req['transports'])}.")
            if notes:
                behavior += " <em>" + " ".join(notes) + "</em>"
            out.append(f"| <a id=\"{_anchor(req['id'])}\"></a><span style=\"white-space: nowrap\">`{req['id']}`</span> "
                       f"| {', '.join(req.get('tiers', []))} | {_basis_cell(req)} | {behavior} | {_basis_text(spec, req)} "
                       f"| {_proved_by(req['id'], root)} |")
        out.append("")
    return "\n".join(out)


def _profile_data(spec: dict[str, Any]) -> list[str]:
    out = ["## Profile data", ""]
    tools = spec.get("tools") or {}
    rows = [("required tools", ", ".join(f"`{t}`" for t in tools.get("required", []))),
            ("adjacent tools", ", ".join(f"`{t}`" for t in tools.get("adjacent", [])) or "none")]
    schemas = spec.get("schemas") or {}
    if schemas.get("input"):
        rows.append(("input schema", f"`schemas/{schemas['input']}`"))
    if schemas.get("error"):
        rows.append(("error schema", f"`schemas/{schemas['error']}`"))
    for tool, name in (schemas.get("outputs") or {}).items():
        rows.append((f"output of `{tool}`", f"`schemas/{name}`"))
    if spec.get("policies"):
        rows.append(("policies", ", ".join(
            f"[{p}](../policies/{Path(p).stem}.md)" for p in spec["policies"])))
    if spec.get("vectors"):
        rows.append(("golden vectors", f"`specs/{spec['vectors']}`"))
    if spec.get("fixture"):
        rows.append(("fixture", _cell(spec["fixture"])))
    for transport, command in (spec.get("reference") or {}).items():
        rows.append((f"reference server ({transport})", f"`{command}`"))
    for name, meaning in (spec.get("placeholders") or {}).items():
        rows.append((f"placeholder `{name}`", _cell(meaning)))
    out += ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows] + [""]
    if spec.get("limits"):
        out += ["Limits the suite checks against:", "", "| limit | value |", "|---|---:|"]
        out += [f"| `{k}` | {v:,} |" if isinstance(v, int) else f"| `{k}` | {v} |"
                for k, v in spec["limits"].items()]
        out.append("")
    return out


def _quotes(spec: dict[str, Any], req: dict[str, Any]) -> list[tuple[str, str]]:
    """(document, words) for every quote of a requirement, its own document's and elsewhere."""
    out = []
    if req.get("basis") == "seed":
        words = req.get("quote") or []
        out += [(req.get("document", spec.get("seed")), q) for q in ([words] if isinstance(words, str) else words)]
    for other in req.get("quoted_elsewhere") or []:
        words = other["quote"]
        out += [(other["document"], q) for q in ([words] if isinstance(words, str) else words)]
    return out


def _document_name(document: str | None) -> str:
    return (document or "").removeprefix("seeds/")


def _sentences_page(spec: dict[str, Any]) -> str:
    reqs = spec["requirements"]
    link = lambda rid: f"[`{rid}`](../requirements/{spec['id']}.md#{_anchor(rid)})"  # noqa: E731
    checked: dict[str, dict[str, list[str]]] = {}
    for req in reqs:
        for document, words in _quotes(spec, req):
            checked.setdefault(_document_name(document), {}).setdefault(" ".join(words.split()), []).append(req["id"])
    listed = spec.get("not_testable") or []
    untestable = [item for item in listed if item.get("kind", "not-testable") == "not-testable"]
    elsewhere = [item for item in listed if item.get("kind") == "out-of-scope"]
    readings = [r for r in reqs if r.get("basis") == "profile"]
    mcp = [r for r in reqs if r.get("basis") == "mcp"]
    out = [f"# {spec['id']}: sentences checked and not testable", "",
           f"Generated from `{spec['_file']}` when the site is built. Change that file, not this page.", "",
           f"The seed is `{_document_name(spec.get('seed'))}`. Every sentence of it, and of the documents it "
           "builds on, that a client can test is quoted by a requirement (first table, per document), or is "
           "listed as not testable with the reason (second table). A spec author sees here which of their "
           "sentences the suite checks and which it cannot.", "",
           "| | |", "|---|---:|",
           f"| sentences quoted by a requirement | {sum(len(v) for v in checked.values())} |",
           f"| sentences not testable (about this server, not visible to a client) | {len(untestable)} |",
           f"| sentences out of this profile's scope (about something else) | {len(elsewhere)} |",
           f"| requirements on the documents' words (basis seed) | {sum(r.get('basis') == 'seed' for r in reqs)} |",
           f"| our readings where the documents are silent (advisories) | {len(readings)} |",
           f"| MUSTs of the MCP specification | {len(mcp)} |", ""]
    out += ["## Sentences the suite checks", ""]
    for document in sorted(checked, key=lambda d: (d != _document_name(spec.get("seed")), d)):
        out += [f"### `{document}`", "", "| the document's words | checked by |", "|---|---|"]
        for words, ids in checked[document].items():
            out.append(f"| “{_cell(words)}” | {', '.join(link(i) for i in dict.fromkeys(ids))} |")
        out.append("")
    def table(items: list[dict[str, Any]]) -> list[str]:
        return ["| the document's words | document | why not |", "|---|---|---|"] + [
            f"| “{_cell(item['sentence'])}” | `{_cell(_document_name(item.get('document', spec.get('seed'))))}` "
            f"| {_cell(item['reason'])} |" for item in items]
    out += ["## Sentences the suite cannot test", "",
            "About the server under test, but nothing a client can observe (an internal function, how it "
            "loads its configuration).", ""]
    out += table(untestable) if untestable else ["None listed: every testable sentence found is quoted above."]
    out += ["", "## Sentences out of this profile's scope", "",
            "About something other than the server under test: another deployment, repository or phase, a "
            "rule for the implementer's process, the document itself.", ""]
    out += table(elsewhere) if elsewhere else ["None listed."]
    out.append("")
    if readings:
        out += ["## Our readings where the documents are silent", "",
                "Advisories: reported apart, failing a run only under `--strict`.", "",
                "| id | behaviour | why the profile reads the documents so |", "|---|---|---|"]
        out += [f"| {link(r['id'])} | {_cell(r.get('behavior', ''))} | {_cell(r.get('reading', ''))} |" for r in readings]
        out.append("")
    return "\n".join(out)


def _sentences_index(profiles: list[dict[str, Any]]) -> str:
    out = ["# Seed sentences", "",
           "For each profile, which sentences of its seed (and of the documents the seed builds on) the "
           "suite checks, under which requirement, and which it cannot test, with the reason. Generated "
           "from `specs/` when the site is built.", "",
           "| profile | seed | sentences checked | not testable | out of scope | advisories |",
           "|---|---|---:|---:|---:|---:|"]
    for spec in profiles:
        quoted = {(d, " ".join(w.split())) for r in spec["requirements"] for d, w in _quotes(spec, r)}
        out.append(f"| [{spec['id']}]({spec['id']}.md) | `{_document_name(spec.get('seed'))}` | {len(quoted)} "
                   f"| {sum(i.get('kind', 'not-testable') == 'not-testable' for i in spec.get('not_testable') or [])} "
                   f"| {sum(i.get('kind') == 'out-of-scope' for i in spec.get('not_testable') or [])} "
                   f"| {sum(r.get('basis') == 'profile' for r in spec['requirements'])} |")
    return "\n".join(out) + "\n"


def _requirements_index(specs: list[dict[str, Any]]) -> str:
    by_id = {s["id"]: s for s in specs}
    out = ["# Requirements", "",
           "Generated from `specs/*.yaml` when the site is built. Each spec is one page; every "
           "requirement has a stable id that tests cite and reports name.", "",
           "| spec | kind | title | total | " + " | ".join(TIERS) + " | " + " | ".join(STRENGTHS) + " |",
           "|---|---|---|---:|" + "---:|" * (len(TIERS) + len(STRENGTHS))]
    for spec in specs:
        reqs = spec["requirements"]
        tiers, strengths = _counts(reqs)
        out.append(f"| [{spec['id']}]({spec['id']}.md) | {spec.get('kind', '')} | {_cell(spec.get('title', ''))} "
                   f"| {len(reqs)} | " + " | ".join(str(tiers.get(t, 0)) for t in TIERS) + " | "
                   + " | ".join(str(strengths.get(s, 0)) for s in STRENGTHS) + " |")
    out += ["", "Tier counts overlap when a requirement has more than one tier.", ""]
    profiles = [s for s in specs if s.get("kind") == "profile"]
    if profiles:
        out += ["## What a profile run checks", "",
                "A profile run checks the profile's own requirements and those of every spec it includes.", "",
                "| profile | includes | requirements checked |", "|---|---|---:|"]
        for spec in profiles:
            includes = [i for i in spec.get("includes") or [] if i in by_id]
            total = len(spec["requirements"]) + sum(len(by_id[i]["requirements"]) for i in includes)
            shown = ", ".join(f"[{i}]({i}.md)" for i in includes) or "none"
            out.append(f"| [{spec['id']}]({spec['id']}.md) | {shown} | {total} |")
        out.append("")
    return "\n".join(out)


# --- policy pages ------------------------------------------------------------------------

def _path_attacks_page(name: str, text: str, data: dict[str, Any]) -> str:
    out = [f"# Policy: {name}", "",
           f"Generated from `policies/{name}` when the site is built. Schema: `schemas/path-attacks.schema.json`.", ""]
    if data.get("description"):
        out += [_cell(data["description"]), ""]
    out += ["## Expectations", "", "| expect | meaning |", "|---|---|"]
    out += [f"| `{k}` | {_cell(v)} |" for k, v in (data.get("expectations") or {}).items()] + [""]
    expects = list((data.get("expectations") or {}).keys())
    for key, heading, what in (("paths", "Paths", "`path` values sent as `{\"path\": ...}`"),
                               ("arguments", "Arguments", "whole `arguments` objects sent to `tools/call`")):
        entries = data.get(key) or []
        if not entries:
            continue
        counts = Counter((e.get("category"), e.get("expect")) for e in entries)
        cols = expects + sorted({e for _, e in counts} - set(expects))
        out += [f"## {heading}", "", f"{len(entries)} entries: {what}.", "",
                "| category | " + " | ".join(cols) + " | total |", "|---|" + "---:|" * (len(cols) + 1)]
        for category in sorted({c for c, _ in counts}):
            row = [counts.get((category, e), 0) for e in cols]
            out.append(f"| {category} | " + " | ".join(map(str, row)) + f" | {sum(row)} |")
        totals = [sum(v for (_, e), v in counts.items() if e == col) for col in cols]
        out.append("| **all** | " + " | ".join(f"**{t}**" for t in totals) + f" | **{sum(totals)}** |")
        out.append("")
    comment = _leading_comment(text)
    if comment:
        out += ["## About the corpus", "", "The file's leading comment:", "", "```text", comment, "```", ""]
    return "\n".join(out)


def _policy_page(name: str, text: str) -> str:
    out = [f"# Policy: {name}", "", f"Generated from `policies/{name}` when the site is built.", ""]
    comment = _leading_comment(text)
    if comment:
        out += [" ".join(comment.split()), ""]
    out += ["```yaml", text.rstrip("\n"), "```", ""]
    return "\n".join(out)


def _policies(root: Path) -> list[tuple[Path, str, Any]]:
    out = []
    for path in _policy_files(root):
        text = path.read_text(encoding="utf-8")
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise PluginError(f"requirements hook: cannot parse policies/{path.name}: {exc}") from exc
        out.append((path, text, data))
    return out


def _policies_index(policies: list[tuple[Path, str, Any]], specs: list[dict[str, Any]]) -> str:
    out = ["# Policies", "",
           "Generated from `policies/*.yaml` when the site is built. Policies are the allowlists, "
           "blocked surfaces and attack corpora the suite's tests read.", "",
           "| file | used by | what it holds |", "|---|---|---|"]
    for path, text, data in policies:
        users = [s["id"] for s in specs if path.name in (s.get("policies") or [])]
        shown = ", ".join(f"[{u}](../requirements/{u}.md)" for u in users) or "no profile"
        first = " ".join(_leading_comment(text).split()).split(". ")[0].rstrip(".")
        out.append(f"| [{path.name}]({path.stem}.md) | {shown} | {_cell(first)} |")
    out.append("")
    return "\n".join(out)


# --- hooks ---------------------------------------------------------------------------------

def on_config(config):
    """Add the generated pages to the nav sections named Requirements and Policies."""
    if not config.nav:
        return config
    root = _root(config)
    extra = {
        "Requirements": [{s["id"]: f"requirements/{s['id']}.md"} for s in _load_specs(root)],
        "Policies": [{p.name: f"policies/{p.stem}.md"} for p in _policy_files(root)],
        "Seed sentences": [{s["id"]: f"sentences/{s['id']}.md"} for s in _load_specs(root) if s.get("seed")],
    }
    for entry in config.nav:
        if isinstance(entry, dict):
            for title, children in entry.items():
                if title in extra and isinstance(children, list):
                    listed = {v for c in children if isinstance(c, dict) for v in c.values()} | {
                        c for c in children if isinstance(c, str)}
                    children += [e for e in extra[title] if next(iter(e.values())) not in listed]
    return config


def on_files(files, config):
    root = _root(config)
    specs = _load_specs(root)
    pages = {"requirements/index.md": _requirements_index(specs)}
    for spec in specs:
        guide = files.get_file_from_path(f"profiles/{spec['id']}.md") is not None
        pages[f"requirements/{spec['id']}.md"] = _spec_page(spec, specs, root, guide)
    seeded = [s for s in specs if s.get("seed")]
    pages["sentences/index.md"] = _sentences_index(seeded)
    for spec in seeded:
        pages[f"sentences/{spec['id']}.md"] = _sentences_page(spec)
    policies = _policies(root)
    pages["policies/index.md"] = _policies_index(policies, specs)
    for path, text, data in policies:
        if path.name == "path-attacks.yaml" and isinstance(data, dict):
            pages[f"policies/{path.stem}.md"] = _path_attacks_page(path.name, text, data)
        else:
            pages[f"policies/{path.stem}.md"] = _policy_page(path.name, text)
    for uri, content in pages.items():
        if files.get_file_from_path(uri) is not None:
            raise PluginError(f"requirements hook: docs/{uri} exists; that page is generated, remove the file")
        files.append(File.generated(config, uri, content=content))
    return files


def _mutant_rows(root: Path) -> list[str]:
    import sys
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from tests.mutants import registry

    rows = ["| mutant | profile | what it breaks | reported under |", "|---|---|---|---|"]
    for name, m in sorted(registry().items(), key=lambda kv: (kv[1].variant, kv[1].profile, kv[0])):
        where = f"{m.profile}" + (f" ({m.transport})" if m.transport else "") + (
            f", phases {', '.join(m.phases)}" if m.phases else "")
        ids = "passes (a correct variant)" if m.variant else ", ".join(m.trips)
        rows.append(f"| `{name}` | {where} | {_cell(m.summary)} | {ids} |")
    return rows


FLAGS = re.compile(r"<!-- flags:([a-z_.]+) -->")


def _flags(module: str, root: Path) -> str:
    """A reference server's own --help, so its page lists every flag it has."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, cwd=root,
                         timeout=60)
    if out.returncode != 0:
        raise PluginError(f"requirements hook: `python -m {module} --help` failed: {out.stderr[-300:]}")
    return f"Its flags (`--help`):\n\n```text\n{out.stdout.strip()}\n```\n"


def on_page_markdown(markdown, page, config, files):
    if FLAGS.search(markdown):
        markdown = FLAGS.sub(lambda m: _flags(m.group(1), _root(config)), markdown)
    if page.file.src_uri != "contracts.md" or MUTANTS_START not in markdown:
        return markdown
    head, rest = markdown.split(MUTANTS_START, 1)
    _old, tail = rest.split(MUTANTS_END, 1)
    table = "\n".join(_mutant_rows(_root(config)))
    return f"{head}{MUTANTS_START}\n{table}\n{MUTANTS_END}{tail}"
