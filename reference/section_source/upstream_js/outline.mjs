// SectionSource v0 on the upstream parser stack: remark-parse 11 (micromark 4) and js-yaml 4.
//
// The rules are docs/section-source/*.md, written out here on top of micromark's syntax tree
// (mdast). It is the oracle for the golden vectors and the differential test, so it stays a
// direct reading of those rules, with no parser corners of its own.
//
// Protocol: one JSON object per stdin line, {"id", "path", "markdown"}; one JSON object per
// stdout line, {"id", "output"} or {"id", "error"}, in the same order. When the frontmatter
// title is not a string (upstream leaves that case open), the answer also carries
// "implementation_defined": ["title"].

import readline from 'node:readline';
import yaml from 'js-yaml';
import remarkParse from 'remark-parse';
import { unified } from 'unified';

const SCHEMA = 'knowtation.section_source/v0';
const MAX_INPUT_CHARS = 1_000_000;
const MAX_SECTIONS = 500;
const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n([\s\S]*)$/;
const parser = unified().use(remarkParse);

function splitFrontmatter(text) {
  const match = FRONTMATTER.exec(text);
  if (!match) return { frontmatter: {}, body: text.trimEnd() };
  let frontmatter = {};
  try {
    const value = yaml.load(match[1]);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) frontmatter = value;
  } catch {
    // Invalid YAML, duplicate keys, several documents: no frontmatter.
  }
  return { frontmatter, body: match[2].trimEnd() };
}

function noteTitle(path, frontmatter) {
  const title = frontmatter.title;
  if (typeof title === 'string' && title.trim() !== '') return title.trim();
  if (title != null && typeof title !== 'string' && String(title).trim() !== '') {
    return String(title).trim(); // upstream's String(); the title is then implementation-defined
  }
  const name = path.split('/').pop().replace(/\.(md|markdown)$/i, '');
  return name.replace(/[-_]+/g, ' ').trim() || null;
}

function slug(text) {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-/, '')
    .replace(/-$/, '');
}

// Depth-first, document order; explicit stacks so that deep trees cannot overflow here.
function* preorder(root) {
  const stack = [root];
  while (stack.length) {
    const node = stack.pop();
    yield node;
    const children = node.children || [];
    for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i]);
  }
}

function leafText(node) {
  if (node.type === 'text' || node.type === 'inlineCode' || node.type === 'html') return node.value;
  if (node.type === 'break') return ' ';
  if (node.type === 'image' || node.type === 'imageReference') return node.alt ?? '';
  return undefined;
}

// Each node's text is its children's texts joined with one space.
function plainText(heading) {
  const stack = [{ node: heading, parts: [], next: 0 }];
  for (;;) {
    const top = stack[stack.length - 1];
    const children = top.node.children || [];
    if (top.next < children.length) {
      const child = children[top.next];
      top.next += 1;
      const leaf = leafText(child);
      if (leaf !== undefined) top.parts.push(leaf);
      else if (Array.isArray(child.children)) stack.push({ node: child, parts: [], next: 0 });
      else top.parts.push('');
      continue;
    }
    stack.pop();
    const text = top.parts.join(' ');
    if (!stack.length) return text;
    stack[stack.length - 1].parts.push(text);
  }
}

function headingText(heading) {
  return plainText(heading).normalize('NFC').replace(/\s+/g, ' ').trim();
}

function isSubstantive(block) {
  for (const node of preorder(block)) {
    if (node.type === 'thematicBreak') return true;
    if (typeof node.value === 'string' && node.value.trim() !== '') return true;
    if ((node.type === 'image' || node.type === 'imageReference') && (node.alt ?? '').trim() !== '') return true;
  }
  return false;
}

export function sectionSource(path, markdown) {
  const { frontmatter, body } = splitFrontmatter(markdown);
  if (body.length > MAX_INPUT_CHARS) {
    throw new Error(
      `Note outline input exceeds ${MAX_INPUT_CHARS} characters; refusing to parse unbounded Markdown.`
    );
  }
  const tree = parser.parse(body);
  const headings = [];
  for (const node of preorder(tree)) if (node.type === 'heading') headings.push(node);
  const blockStarts = tree.children
    .filter((block) => block.type !== 'heading' && isSubstantive(block))
    .map((block) => block.position.start.offset);

  const pathSlug = slug(path) || 'note';
  const sections = [];
  const open = [];
  headings.slice(0, MAX_SECTIONS).forEach((heading, index) => {
    const level = heading.depth;
    const text = headingText(heading);
    const ordinal = String(index + 1).padStart(4, '0');
    const headingId = `h${level}-${slug(text) || 'heading'}-${ordinal}`;
    const next = headings.slice(index + 1).find((later) => later.depth <= level);
    const windowStart = heading.position.end.offset;
    const windowEnd = next ? next.position.start.offset : Infinity;
    while (open.length && open[open.length - 1].level >= level) open.pop();
    const parent = open.length ? open[open.length - 1] : null;
    const section = {
      section_id: `${pathSlug}:${headingId}`,
      heading_id: headingId,
      level,
      heading_path: [...(parent ? parent.heading_path : []), text],
      heading_text: text,
      child_section_ids: [],
      body_available: blockStarts.some((start) => start >= windowStart && start < windowEnd),
      body_returned: false,
      snippet_returned: false,
    };
    if (parent) parent.child_section_ids.push(section.section_id);
    open.push(section);
    sections.push(section);
  });
  const output = {
    schema: SCHEMA,
    path,
    title: noteTitle(path, frontmatter),
    sections,
    truncated: headings.length > MAX_SECTIONS,
  };
  const title = frontmatter.title;
  const undefinedTitle = title != null && typeof title !== 'string';
  return { output, implementation_defined: undefinedTitle ? ['title'] : undefined };
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  const { id, path, markdown } = JSON.parse(line);
  let answer;
  try {
    const { output, implementation_defined } = sectionSource(path, markdown);
    answer = { id, output, implementation_defined };
  } catch (error) {
    answer = { id, error: `${error.name}: ${error.message}` };
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
