"""Write the hostile matrix's figures into docs/troubleshooting.md, from the log a run of
tests/test_hostile.py leaves with RC_HOSTILE_LOG set (one JSON object per hostile run):

    RC_HOSTILE_MATRIX=full RC_HOSTILE_LOG=/tmp/hostile.jsonl pytest -p no:randomly tests/test_hostile.py
    python tests/hostile/table.py /tmp/hostile.jsonl

The table sits between the page's `<!-- hostile:start -->` and `<!-- hostile:end -->` lines:
one row per mode, one column per profile and transport, each cell the run's wall time, the
peak resident memory of the suite's processes and the exit status (the last run of a cell wins).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from contract_tests.contracts import specs as contracts  # noqa: E402
from tests.test_hostile import TARGETS, modes_of  # noqa: E402

PAGE = ROOT / "docs" / "troubleshooting.md"
START, END = "<!-- hostile:start -->", "<!-- hostile:end -->"


def short(profile: str) -> str:
    """The profile's requirement-id prefix (SSL, VA, ...), for a column heading."""
    ids = [item["id"] for item in contracts.spec(profile)["requirements"]]
    return max({i.split("-")[0] for i in ids}, key=lambda prefix: sum(i.startswith(prefix + "-") for i in ids))


def table(runs: list[dict]) -> str:
    cells = {(r["profile"], r["transport"], r["mode"]): r for r in runs}
    modes = sorted({m for p, t in TARGETS for m in modes_of(p, t)})
    head = "| mode | " + " | ".join(f"{short(p)} {t}" for p, t in TARGETS) + " |"
    lines = [head, "|---|" + "---:|" * len(TARGETS)]
    for mode in modes:
        row = []
        for profile, transport in TARGETS:
            run = cells.get((profile, transport, mode))
            if mode not in modes_of(profile, transport):
                row.append("")
            elif run is None:
                row.append("not run")
            else:
                row.append(f"{run['wall_s']:.0f} s, {run['peak_mib']} MiB, exit {run['exit']}")
        lines.append(f"| `{mode}` | " + " | ".join(row) + " |")
    worst = max(runs, key=lambda r: r["wall_s"])
    heaviest = max(runs, key=lambda r: r["peak_mib"])
    lines += ["", f"{len(cells)} runs; the longest {worst['wall_s']:.0f} s ({worst['profile']} {worst['transport']} "
              f"{worst['mode']}), the largest {heaviest['peak_mib']} MiB ({heaviest['profile']} "
              f"{heaviest['transport']} {heaviest['mode']})."]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    runs = [json.loads(line) for line in Path(argv[0]).read_text(encoding="utf-8").splitlines() if line.strip()]
    if not runs:
        print(f"{argv[0]}: no runs in the log", file=sys.stderr)
        return 1
    text = PAGE.read_text(encoding="utf-8")
    if START not in text or END not in text:
        print(f"{PAGE}: no {START} ... {END} block", file=sys.stderr)
        return 1
    before, rest = text.split(START, 1)
    _, after = rest.split(END, 1)
    PAGE.write_text(f"{before}{START}\n{table(runs)}\n{END}{after}", encoding="utf-8")
    print(f"{PAGE.relative_to(ROOT)}: {len(runs)} runs written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
