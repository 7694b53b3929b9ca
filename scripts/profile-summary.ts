/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self and total time by function, and self
 * time by file group (paylink's own directories, each package of node_modules, node's internals).
 *
 *   npx tsx scripts/profile-summary.ts /tmp/prof/CPU.*.cpuprofile [--top 40] [--from 10 --to 25]
 *
 * `--from`/`--to` (seconds since the profile's start) keep one window, e.g. one bench phase, which
 * the timeline printed first helps to find. Total time counts a function once per sample however
 * deep it recurses.
 */
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * The group a script belongs to: a package, a paylink directory (built in dist/, or its source run
 * through tsx), or node itself.
 */
export function groupOf(url: string, fn: string): string {
  if (url === '') return fn.startsWith('(') ? fn : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? url);
  }
  const m = /\/(?:dist\/)?(src|simulator|test)\/([^/]+)(?:\/([^/]+))?/.exec(url);
  if (m)
    return m[3] === undefined || /\.[jt]s$/.test(m[3]) ? `paylink ${m[1]}/${m[2]}` : `paylink ${m[1]}/${m[2]}/${m[3]}`;
  return url.replace(/^file:\/\//, '');
}

export function label(f: CallFrame): string {
  const file = f.url
    .replace(/^file:\/\//, '')
    .replace(/^.*node_modules\//, '')
    .replace(/^.*\/dist\//, '');
  return `${f.functionName || '(anonymous)'} ${file ? `${file}:${f.lineNumber + 1}` : ''}`.trim();
}

function pct(n: number, total: number): string {
  return `${((100 * n) / total).toFixed(1).padStart(5)} %`;
}

/**
 * Self time (µs) of `p` by group and by function; `busy` is their sum. Left out: idle time, and
 * the in-process inspector's own `dispatch` (starting and stopping the profiler, which an
 * in-process session samples too). A native function (better-sqlite3's `run`, a crypto binding)
 * counts as `native <name>` in the group of the script that called it: `run` under
 * `paylink src/storage/sqlite` is the statement itself, its fsync wait included (the profiler
 * samples the main thread's wall time, not its CPU). Garbage collection and V8's own work show as
 * `(garbage collector)` and `(program)`.
 */
export function selfTimes(p: Profile): { busy: number; groups: Map<string, number>; functions: Map<string, number> } {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (!node) return;
    const { functionName: fn, url } = node.callFrame;
    if (fn === '(idle)' || (fn === 'dispatch' && url === '')) return;
    busy += dt;
    let g = groupOf(url, fn);
    if (g === '(native)') {
      let caller = byId.get(parent.get(id) ?? -1);
      while (caller && caller.callFrame.url === '' && !caller.callFrame.functionName.startsWith('('))
        caller = byId.get(parent.get(caller.id) ?? -1);
      g = `${caller ? groupOf(caller.callFrame.url, caller.callFrame.functionName) : '(root)'}: native ${fn || '(anonymous)'}`;
    }
    groups.set(g, (groups.get(g) ?? 0) + dt);
    const k = label(node.callFrame);
    functions.set(k, (functions.get(k) ?? 0) + dt);
  });
  return { busy, groups, functions };
}

function main(): void {
  const files = process.argv.slice(2).filter((a, i, all) => a.endsWith('.cpuprofile') && !all[i - 1]?.startsWith('--'));
  const top = Number(arg('--top') ?? '30');
  const from = Number(arg('--from') ?? '0') * 1e6;
  const to = Number(arg('--to') ?? 'Infinity') * 1e6;
  for (const file of files) {
    const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const self = new Map<string, number>();
    const total = new Map<string, number>();
    const groups = new Map<string, number>();
    const timeline: number[] = [];
    let t = 0;
    let sum = 0;
    p.samples.forEach((id, i) => {
      const dt = p.timeDeltas[i] ?? 0;
      t += dt;
      const node = byId.get(id);
      if (!node) return;
      const idle = node.callFrame.functionName === '(idle)';
      const second = Math.floor(t / 1e6);
      if (!idle) timeline[second] = (timeline[second] ?? 0) + dt;
      if (t < from || t > to || idle) return;
      sum += dt;
      const key = label(node.callFrame);
      self.set(key, (self.get(key) ?? 0) + dt);
      const g = groupOf(node.callFrame.url, node.callFrame.functionName);
      groups.set(g, (groups.get(g) ?? 0) + dt);
      const seen = new Set<string>();
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const n = byId.get(cur);
        if (!n) break;
        const k = label(n.callFrame);
        if (seen.has(k)) continue;
        seen.add(k);
        total.set(k, (total.get(k) ?? 0) + dt);
      }
    });
    const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
    console.log(`\n# ${file}: ${(sum / 1e3).toFixed(0)} ms busy in the window`);
    console.log('\nbusy ms per second since start:');
    console.log(timeline.map((v, i) => `${i}:${Math.round((v ?? 0) / 1e3)}`).join(' '));
    console.log('\nself time by group:');
    for (const [k, v] of sorted(groups)) console.log(`${pct(v, sum)}  ${k}`);
    console.log('\nself time by function:');
    for (const [k, v] of sorted(self)) console.log(`${pct(v, sum)}  ${k}`);
    console.log('\ntotal time by function:');
    for (const [k, v] of sorted(total)) console.log(`${pct(v, sum)}  ${k}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
