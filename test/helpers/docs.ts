import fs from 'node:fs';
import path from 'node:path';
import { ROOT_DIR } from '../../src/common/config.js';

/** What a newcomer reads: the README, the changelog and every guide under docs/. */
export function documents(): string[] {
  return ['README.md', 'CHANGELOG.md', ...fs.readdirSync(path.join(ROOT_DIR, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
}

/** The lines of a Markdown text outside its fenced code blocks, and the blocks, each with its language. */
export function parts(text: string): { prose: string[]; blocks: Array<{ lang: string; body: string }> } {
  const prose: string[] = [];
  const blocks: Array<{ lang: string; body: string }> = [];
  let open: { lang: string; lines: string[] } | undefined;
  for (const line of text.split('\n')) {
    const fence = /^\s*```(\w*)/.exec(line);
    if (fence && !open) open = { lang: fence[1] ?? '', lines: [] };
    else if (fence && open) {
      blocks.push({ lang: open.lang, body: open.lines.join('\n') });
      open = undefined;
    } else if (open) open.lines.push(line);
    else prose.push(line);
  }
  return { prose, blocks };
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_~]/g, '')
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown text's headings. */
export function anchors(text: string): Set<string> {
  return new Set(parts(text).prose.flatMap((line) => /^#{1,6} (.+)$/.exec(line)?.[1] ?? []).map(anchorOf));
}

/** Every relative link of a text's prose: `[text](target)`, targets that are not URLs. */
export function relativeLinks(text: string): string[] {
  return parts(text)
    .prose.join('\n')
    .split(/(?=\[)/)
    .flatMap((chunk) => /^\[[^\]]*\]\(([^)\s]+)\)/.exec(chunk)?.[1] ?? [])
    .filter((target) => !/^[a-z]+:/i.test(target));
}
