/**
 * Every relative link in the project's Markdown (README.md, docs/, simulator/README.md) points to a
 * file or folder of the repository, and every `#anchor` into a Markdown file names one of its
 * headings. Links to other sites are not followed: the tests run without the internet.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

interface Link {
  file: string;
  line: number;
  target: string;
}

/** The documentation files of a checkout: the README, everything under docs/, the simulator's README. */
function documentationFiles(root: string): string[] {
  const files = ['README.md', 'simulator/README.md'].filter((f) => fs.existsSync(path.join(root, f)));
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.md')) files.push(rel);
    }
  };
  if (fs.existsSync(path.join(root, 'docs'))) walk('docs');
  return files;
}

/** Blanks fenced code blocks (keeping their line breaks), so their contents are neither links nor headings. */
function withoutFences(text: string): string {
  let fence: string | undefined;
  return text
    .split('\n')
    .map((line) => {
      const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence === undefined && marker !== undefined) {
        fence = marker;
        return '';
      }
      if (fence !== undefined) {
        if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
        return '';
      }
      return line;
    })
    .join('\n');
}

/** Blanks inline code spans too: `[x](y)` written as code is text, not a link. */
function prose(text: string): string {
  return withoutFences(text).replace(/(`+)[^`][\s\S]*?\1/g, (span) => span.replace(/[^\n]/g, ' '));
}

function linksIn(file: string, text: string): Link[] {
  const body = prose(text);
  const lineOf = (index: number) => body.slice(0, index).split('\n').length;
  const found: Link[] = [];
  const patterns = [
    // [text](target) and ![alt](target), with an optional "title"
    /!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g,
    // [label]: target
    /^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/gm,
    // <a href="…">, <img src="…">
    /\b(?:href|src)="([^"]*)"/g,
  ];
  for (const pattern of patterns) {
    for (const m of body.matchAll(pattern)) found.push({ file, line: lineOf(m.index), target: m[1] ?? '' });
  }
  return found;
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens. */
function headingSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/\*+/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

function anchorsIn(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(text).split('\n')) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  for (const m of text.matchAll(/\b(?:id|name)="([^"]+)"/g)) anchors.add(m[1] ?? '');
  return anchors;
}

/** Every dead relative link of the given files, as `file:line → target: why`. */
function deadLinks(root: string, files: string[]): { checked: number; problems: string[] } {
  const problems: string[] = [];
  let checked = 0;
  for (const file of files) {
    for (const link of linksIn(file, fs.readFileSync(path.join(root, file), 'utf8'))) {
      // Other sites (https:, mailto:, //host) are not followed.
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.target) || link.target.startsWith('//')) continue;
      checked++;
      const at = `${link.file}:${link.line} → ${link.target}`;
      if (link.target === '') {
        problems.push(`${at}: empty link`);
        continue;
      }
      const hash = link.target.indexOf('#');
      const pathPart = decodeURIComponent(hash === -1 ? link.target : link.target.slice(0, hash));
      const anchor = hash === -1 ? undefined : decodeURIComponent(link.target.slice(hash + 1));
      const resolved = pathPart === '' ? path.join(root, file) : path.resolve(root, path.dirname(file), pathPart);
      const inside = path.relative(root, resolved);
      if (inside.startsWith('..') || path.isAbsolute(inside)) {
        problems.push(`${at}: outside the repository`);
        continue;
      }
      if (!fs.existsSync(resolved)) {
        problems.push(`${at}: no such file`);
        continue;
      }
      if (
        anchor !== undefined &&
        resolved.endsWith('.md') &&
        !anchorsIn(fs.readFileSync(resolved, 'utf8')).has(anchor)
      ) {
        problems.push(`${at}: no heading #${anchor} in ${inside}`);
      }
    }
  }
  return { checked, problems };
}

describe('documentation links', () => {
  it('every relative link and anchor in README.md, docs/ and simulator/README.md resolves', () => {
    const root = path.resolve('.');
    const files = documentationFiles(root);
    expect(files).toEqual(expect.arrayContaining(['README.md', 'simulator/README.md', 'docs/security.md']));
    const { checked, problems } = deadLinks(root, files);
    expect(problems).toEqual([]);
    // The README links every document, so a parser that finds nothing is itself a failure.
    expect(checked).toBeGreaterThan(files.length);
  });

  it('reports a dead file, a dead anchor and a path out of the repository, and ignores code and other sites', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'paylink-doclinks-'));
    try {
      fs.mkdirSync(path.join(root, 'docs'));
      fs.writeFileSync(
        path.join(root, 'docs', 'here.md'),
        '# Here\n\n## A heading, with `code`\n\n## Twice\n\n## Twice\n',
      );
      fs.writeFileSync(
        path.join(root, 'README.md'),
        [
          '# Top',
          '[gone](docs/missing.md) and [fine](docs/here.md#a-heading-with-code) and [second](docs/here.md#twice-1)',
          '[no such heading](docs/here.md#nowhere) [self](#top) [self, dead](#bottom)',
          '![picture](docs/missing.png) [up](../../etc/passwd) [site](https://example.com/x.md)',
          '`[in code](docs/code-span.md)`',
          '```',
          '[in a fence](docs/fenced.md)',
          '```',
          '[ref]: docs/also-missing.md',
        ].join('\n'),
      );
      const { problems } = deadLinks(root, documentationFiles(root));
      expect(problems).toEqual([
        'README.md:2 → docs/missing.md: no such file',
        'README.md:3 → docs/here.md#nowhere: no heading #nowhere in docs/here.md',
        'README.md:3 → #bottom: no heading #bottom in README.md',
        'README.md:4 → docs/missing.png: no such file',
        'README.md:4 → ../../etc/passwd: outside the repository',
        'README.md:9 → docs/also-missing.md: no such file',
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('anchors are the ones GitHub gives the headings', () => {
    expect(headingSlug("Choices where the gateway's documentation is uncertain")).toBe(
      'choices-where-the-gateways-documentation-is-uncertain',
    );
    expect(headingSlug('Cards and 3-D Secure')).toBe('cards-and-3-d-secure');
    expect(headingSlug('Delivery: order, retries and dead events')).toBe('delivery-order-retries-and-dead-events');
    expect(headingSlug('`/docs` and `x_y`')).toBe('docs-and-x_y');
    expect(headingSlug('The console: server-rendered HTML')).toBe('the-console-server-rendered-html');
  });
});
