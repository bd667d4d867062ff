"""Generated notes for the differential test: the builder against the upstream parser stack.

Two families, both deterministic:
- a grid: every heading form (ATX 1-6 with and without closing hashes, setext with `=` and
  `-`, indented underlines) holding every inline piece (emphasis, links, images, raw HTML,
  entities, odd whitespace, astral characters), inside every container (none, quotes, bullet
  and ordered lists, nested mixes, lazy lines), with LF or CRLF;
- line combinations: every sequence of three lines from a set of list, code, definition,
  quote and setext lines (where micromark's "interrupt" rules live);
- random notes: frontmatter variants, then blocks drawn from a vocabulary of the parser
  corners (definitions, indented code, empty list items, HTML blocks, fences, breaks),
  wrapped in random containers.
"""

from __future__ import annotations

import itertools
import random

INLINE = [
    "plain words", "Caf\u00e9 Cr\u00e8me", "\u65e5\u672c\u8a9e", "\U0001F600 emoji", "*em*", "**strong**", "_u_",
    "__uu__", "***both***", "*a **b** c*", "foo**bar**baz", "a*b*c", "a_b_c", "**a*b***", "*a**b*",
    "***a* b**", "*a ***b*** c*", "**foo*bar*baz**", "*foo**bar**baz*", "*(*a*)*", "_(_a_)_",
    "`code`", "``a ` b``", "`unclosed", "[link](/u)", "[link *em*](/u \"t\")", "[ref]", "[ref][]",
    "[text][ref]", "[ref][", "[ref][x y", "[ref][[]", "[ref](", "[ref]( ", "[ref](<", "[nope]",
    "[nope][ref]", "[ref][nope]", "[a [b] c](/u)", "[[ref]]", "![alt](i.png)", "![](e.png)",
    "![*a* `b`](x)", "![ref]", "![ref][", "![ref](", "<span>x</span>", "<a\u00a0b>x", "<b\u3000>y",
    "<a href=\"x\"\u00a0>z", "<!-- c -->", "<https://x.y/a b>", "<https://x.y>", "<m@x.y>",
    "&amp; &copy;", "&nbsp;", "&#42;x&#42;", "\\*esc\\*", "x \\#", "a\u2028*b*", "*b*\u2028a",
    "a*\u2028b*", "*a\u2029*b", "a\ufeff*b*", "**a**\ufeffb", "\U0001F600*a*\U0001F600",
    "*\U0001F600*", "a*\U0001F600*b", "\U0001F600_a_\U0001F600", "_\U0001F600_", "\u00a0*a*\u00a0",
    "\u3000**b**", "x\u00a0_y_", "a*\u00a0b*", "Cafe\u0301", "\u212b", "tab\there", "f\u000cf",
    "x\u0085y", "#hash", "## trailing ##", "end #", "***", "___a___",
]

HEADING_FORMS = ["# {}", "## {}", "### {} ###", "#### {} #", "##### {}", "###### {}", "#{}",
                 "   # {}", "{}\n===", "{}\n---", "{}\n   ===", "{}\n    ===", "{}\nmore\n---"]

CONTAINERS = [
    ("", ""), ("> ", "> "), ("- ", "  "), ("1. ", "   "), ("2) ", "   "), ("> - ", ">   "),
    ("- > ", "  > "), (">> ", ">> "), ("- - ", "    "), ("* 1. ", "     "), ("> ", ""),  # lazy
]

BLOCKS = [
    "text line", "more text *em* and [ref]", "", "", "    indented code", "    ", "```\nfenced\n```",
    "```", "~~~ md\n# not\n~~~", "<div>\n# in html\n</div>", "<custom-tag>", "<custom-tag x=1>",
    "<!-- c -->", "<a\u00a0b>", "***", "---", "- - -", "===", "   ===", "[ref]: /u", "[ref]: /u \"t\"",
    "[a]: /v\n[b]: /w", "-", "- ", "*", "2.", "2. x", "1.", "1. x", "- x", "* y", "+ z", "-\n  x",
    "> q", ">", "> # qh", "- # lh", "1. ## oh", "# h", "## h2", "### h3", "h\n===", "h\n---",
    "&nbsp;", "![](e.png)", "[](/x)", "\\", "  \\", "- a\n-\n- b", "- a\n\n-\n\n  x", "1. a\n3.\n",
    "    code\n\n    more", "<script>\n# x\n</script>", "<?php x ?>", "<![CDATA[ x ]]>", "<!X y>",
]

FRONTMATTER = [
    "", "", "", "---\ntitle: Front\n---\n", "---\r\ntitle: Crlf\r\n---\r\n", "---\ntitle: yes\n---\n",
    "---\ntitle: 1:30\n---\n", "---\ntitle: [a\n---\n", "---\ntitle: a\ntitle: b\n---\n",
    "---\ntitle: 42\n---\n", "---\n- a\n---\n", "---\n\n---\n", "---\ntitle: '  '\n---\n",
    "\ufeff---\ntitle: bom\n---\n", "\n---\ntitle: late\n---\n", "---\ntitle: x\n---",
    "---\ntitle: ok\n--- \n", "---\ntitle: \"q\"\nother: [1, 2]\n---\n", "\ufeff",
    "---\ntitle: -.5\n---\n", "---\ntitle:\tTabbed\n---\n",
]

COMBO_LINES = ["- a", "-", "", "  b", "  # h", "1. x", "2.", "  -", "---", "b", "===", "    c", "> -",
               "[r]: /u"]

PATHS = ["gen/note.md", "gen/Caf\u00e9 Note.markdown", "gen/readme.txt", "gen/\u65e5\u672c/\u30e1\u30e2",
         "gen/UPPER.MD", "gen/__.md"]


def _contain(text: str, first: str, rest: str) -> str:
    lines = text.split("\n")
    return "\n".join([first + lines[0]] + [(rest + line) if line else rest.rstrip() for line in lines[1:]])


def grid() -> list[tuple[str, str]]:
    """(path, markdown) for every heading form x inline piece x container, cycling the
    combinations so each piece meets each form and each container."""
    notes = []
    for i, piece in enumerate(INLINE):
        for j, form in enumerate(HEADING_FORMS):
            first, rest = CONTAINERS[(i + j) % len(CONTAINERS)]
            heading = form.format(piece)
            body = _contain(heading + "\n\nbody", first, rest)
            newline = "\r\n" if (i + j) % 5 == 0 else "\n"
            notes.append(("gen/grid.md", body.replace("\n", newline) + newline))
    return notes


def line_combinations() -> list[tuple[str, str]]:
    return [("gen/combo.md", "\n".join(lines)) for lines in itertools.product(COMBO_LINES, repeat=3)]


def random_notes(count: int, seed: int = 9) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    notes = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 7)):
            block = rng.choice(BLOCKS) if rng.random() < 0.7 else rng.choice(HEADING_FORMS).format(rng.choice(INLINE))
            if rng.random() < 0.35:
                first, rest = rng.choice(CONTAINERS)
                block = _contain(block, first, rest)
            parts.append(block)
        text = "\n".join(parts)
        newline = rng.choice(["\n", "\n", "\n", "\r\n"])
        text = text.replace("\n", newline) + rng.choice(["", newline, newline + newline])
        notes.append((rng.choice(PATHS), rng.choice(FRONTMATTER) + text))
    return notes


def all_notes(random_count: int = 2000) -> list[tuple[str, str]]:
    return grid() + line_combinations() + random_notes(random_count)
