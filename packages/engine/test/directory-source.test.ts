// The directory source reads only what changed and emits only the objects that changed; broken
// links, loops and duplicates never stop the rest from loading.
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import type { SourceEvent } from '../src/events.js';
import { directorySource } from '../src/sources/directory.js';

const cm = (name: string, value: string, ns = 'apps') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${ns}}\ndata: {v: "${value}"}\n`;
const dirs: string[] = [];
const subs: Subscription[] = [];
afterEach(() => {
  for (const s of subs.splice(0)) s.unsubscribe();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'turnpike-dir-'));
  dirs.push(dir);
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  return dir;
}

function watchDir(dir: string, errors: string[] = [], pollMs = 50) {
  const events: SourceEvent[] = [];
  subs.push(
    directorySource(dir, { pollMs, onError: (m) => errors.push(m), now: () => '2026-01-01T00:00:00Z' }).subscribe((e) =>
      events.push(e),
    ),
  );
  return events;
}
const NO_RESCAN = 3_600_000;
const valueOf = (e: SourceEvent) => (e.object as { data?: { v?: string } } | undefined)?.data?.v;

const until = async (cond: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 10));
  }
};
// The object events (problem events have a test of their own).
const names = (events: SourceEvent[]) =>
  events.filter((e) => e.type !== 'synced' && e.type !== 'problem').map((e) => `${e.type} ${e.name}`);

describe('directory source', () => {
  it('an edit of one file emits the objects of that file that changed, and nothing else', async () => {
    const dir = tree({ 'a.yaml': cm('a1', 'x') + '---\n' + cm('a2', 'x'), 'sub/b.yaml': cm('b', 'x') });
    const events = watchDir(dir);
    expect(names(events)).toEqual(['upsert a1', 'upsert a2', 'upsert b']);
    events.length = 0;
    writeFileSync(join(dir, 'a.yaml'), cm('a1', 'x') + '---\n' + cm('a2', 'changed'));
    await until(() => events.length > 0);
    await new Promise((r) => setTimeout(r, 200)); // a few rescans: nothing more comes
    expect(names(events)).toEqual(['upsert a2']);
  });

  it('an edit that keeps size and mtime is still seen (the fs event names the file)', async () => {
    const dir = tree({ 'a.yaml': cm('a', 'x') });
    const events = watchDir(dir);
    const { atime, mtime } = statSync(join(dir, 'a.yaml'));
    events.length = 0;
    writeFileSync(join(dir, 'a.yaml'), cm('a', 'y'));
    utimesSync(join(dir, 'a.yaml'), atime, mtime);
    await until(() => events.length > 0);
    expect(names(events)).toEqual(['upsert a']);
  });

  it('saves that replace the file (write a temporary file, rename it over) are each seen from notifications alone', async () => {
    const dir = tree({ 'sub/a.yaml': cm('a', 'v0') });
    const events = watchDir(dir, [], NO_RESCAN);
    for (const v of ['v1', 'v2', 'v3']) {
      writeFileSync(join(dir, 'sub', '.a.yaml.tmp'), cm('a', v));
      renameSync(join(dir, 'sub', '.a.yaml.tmp'), join(dir, 'sub', 'a.yaml'));
      await until(() => events.some((e) => valueOf(e) === v), 10_000);
    }
  });

  it('a directory created after the start is watched: a file written in it later is seen without a rescan', async () => {
    const dir = tree({ 'a.yaml': cm('a', 'x') });
    const events = watchDir(dir, [], NO_RESCAN);
    mkdirSync(join(dir, 'team'));
    writeFileSync(join(dir, 'team', 'b.yaml'), cm('b', 'one'));
    await until(() => events.some((e) => valueOf(e) === 'one'), 10_000);
    writeFileSync(join(dir, 'team', 'b.yaml'), cm('b', 'two'));
    await until(() => events.some((e) => valueOf(e) === 'two'), 10_000);
  });

  it('a removed file deletes its objects; a broken file keeps them and says so', async () => {
    const errors: string[] = [];
    const dir = tree({ 'a.yaml': cm('a', 'x'), 'b.yaml': cm('b', 'x') });
    const events = watchDir(dir, errors);
    events.length = 0;
    writeFileSync(join(dir, 'b.yaml'), 'kind: [unclosed');
    rmSync(join(dir, 'a.yaml'));
    await until(() => events.length > 0 && errors.length > 0);
    await new Promise((r) => setTimeout(r, 200));
    expect(names(events)).toEqual(['delete a']);
    expect(errors.join('\n')).toMatch(/b\.yaml:\d+:\d+: YAML syntax error.*keeping this file's previous objects/);
  });

  it('a dangling link and a link loop are reported and skipped; the other files load', () => {
    const errors: string[] = [];
    const dir = tree({ 'a.yaml': cm('a', 'x') });
    symlinkSync(join(dir, 'missing.yaml'), join(dir, 'dangling.yaml'));
    symlinkSync(dir, join(dir, 'loop'));
    const events = watchDir(dir, errors);
    expect(names(events)).toEqual(['upsert a']);
    expect(errors.join('\n')).toMatch(/dangling\.yaml: cannot read/);
    expect(errors.join('\n')).toMatch(/loop: a symbolic link loop/);
  });

  it('a duplicate in a new file that sorts first does not replace the live object; the warning names the new file', async () => {
    const errors: string[] = [];
    const dir = tree({ 'b.yaml': cm('same', 'live') });
    const events = watchDir(dir, errors);
    events.length = 0;
    writeFileSync(join(dir, 'a.yaml'), cm('same', 'intruder'));
    await until(() => errors.length > 0);
    await new Promise((r) => setTimeout(r, 200));
    expect(names(events)).toEqual([]);
    expect(errors[0]).toMatch(
      new RegExp(`${join(dir, 'a.yaml')}: ConfigMap/apps/same is defined twice \\(first in ${join(dir, 'b.yaml')}\\)`),
    );
    // The live copy goes away: the other one takes over.
    rmSync(join(dir, 'b.yaml'));
    await until(() => events.length > 0);
    expect((events[0] as { object?: { data?: { v?: string } } }).object?.data?.v).toBe('intruder');
  });

  it('an object the API server would refuse is not loaded; a refused edit keeps the version before; a fix loads', async () => {
    const errors: string[] = [];
    const gw = (name: string, port: number | string) =>
      `apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: ${name}, namespace: infra}\n` +
      `spec: {gatewayClassName: turnpike, listeners: [{name: http, port: ${port}, protocol: HTTP}]}\n`;
    const dir = tree({ 'a.yaml': gw('bad', 70000) + '---\n' + gw('good', 80) });
    const events = watchDir(dir, errors);
    expect(names(events)).toEqual(['upsert good']);
    expect(errors).toEqual([
      `${join(dir, 'a.yaml')}: Gateway infra/bad is invalid, as the API server would refuse it: spec.listeners[0].port: 70000 is above the maximum 65535 (not loaded)`,
    ]);
    events.length = 0;
    writeFileSync(join(dir, 'a.yaml'), gw('bad', 70000) + '---\n' + gw('good', 'eighty'));
    await until(() => errors.length > 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(names(events)).toEqual([]);
    expect(errors[1]).toMatch(
      /Gateway infra\/good is invalid, .*spec\.listeners\[0\]\.port: must be an integer, not the string "eighty" \(keeping its previous version\)$/,
    );
    writeFileSync(join(dir, 'a.yaml'), gw('bad', 8080) + '---\n' + gw('good', 81));
    await until(() => events.length >= 2);
    expect(names(events).sort()).toEqual(['upsert bad', 'upsert good']);
  });
});

describe('a file truncated and written again (a save that empties the file first)', () => {
  const watchHolding = (dir: string, emptiedFileHoldMs: number) => {
    const events: SourceEvent[] = [];
    const held: string[] = [];
    subs.push(
      directorySource(dir, {
        pollMs: 50,
        emptiedFileHoldMs,
        onHold: (f) => held.push(f),
        now: () => '2026-01-01T00:00:00Z',
      }).subscribe((e) => events.push(e)),
    );
    return { events, held };
  };

  it('keeps its objects while it is empty: the rewrite is one update, never a delete and a create', async () => {
    const dir = tree({ 'gw.yaml': cm('a', 'x') + '---\n' + cm('b', 'x') });
    const file = join(dir, 'gw.yaml');
    // A hold far longer than the test: what ends it here is the rewrite.
    const { events, held } = watchHolding(dir, 600_000);
    events.length = 0;
    writeFileSync(file, '');
    await until(() => held.length > 0 || names(events).length > 0);
    expect([held, names(events)]).toEqual([[file], []]);
    writeFileSync(file, cm('a', 'y') + '---\n' + cm('b', 'x'));
    await until(() => events.some((e) => valueOf(e) === 'y'));
    expect(names(events)).toEqual(['upsert a']);
  });

  it('left empty until the hold is over, its objects are deleted, as a file emptied on purpose', async () => {
    const dir = tree({ 'gw.yaml': cm('a', 'x'), 'other.yaml': cm('c', 'x') });
    const file = join(dir, 'gw.yaml');
    const { events, held } = watchHolding(dir, 30);
    events.length = 0;
    writeFileSync(file, '');
    await until(() => names(events).length > 0);
    expect([held, names(events)]).toEqual([[file], ['delete a']]);
  });
});

describe('directory source problems as events', () => {
  it('a file that breaks and is fixed, and an update refused then accepted, are recorded as problem events', async () => {
    const dir = tree({ 'a.yaml': cm('a', 'x') });
    const fixed: string[] = [];
    const events: SourceEvent[] = [];
    subs.push(
      directorySource(dir, { pollMs: 50, onFixed: (m) => fixed.push(m), now: () => '2026-01-01T00:00:00Z' }).subscribe(
        (e) => events.push(e),
      ),
    );
    const file = join(dir, 'a.yaml');
    writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n');
    await until(() => events.some((e) => e.type === 'problem' && !e.fixed));
    writeFileSync(file, cm('a', 'y'));
    await until(() => events.some((e) => e.type === 'problem' && e.fixed));
    const problems = events.filter((e) => e.type === 'problem');
    expect(problems.map((e) => [e.name, e.fixed ?? false])).toEqual([
      [file, false],
      [file, true],
    ]);
    expect(problems[0]!.message).toContain('YAML');
    expect(fixed).toEqual([`${file}: parses again`]);
    // An update the API server would refuse (a Gateway listener port out of range), then a good one.
    const gw = (port: number) =>
      `apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw, namespace: infra}\n` +
      `spec: {gatewayClassName: tp, listeners: [{name: http, port: ${port}, protocol: HTTP}]}\n`;
    writeFileSync(join(dir, 'gw.yaml'), gw(80));
    await until(() => events.some((e) => e.type === 'upsert' && e.name === 'gw'));
    writeFileSync(join(dir, 'gw.yaml'), gw(70000));
    await until(() => events.filter((e) => e.type === 'problem').length === 3);
    writeFileSync(join(dir, 'gw.yaml'), gw(81));
    await until(() => events.filter((e) => e.type === 'problem').length === 4);
    const [refused, accepted] = events.filter((e) => e.type === 'problem').slice(2);
    expect(refused).toMatchObject({ name: `${join(dir, 'gw.yaml')}#Gateway/infra/gw` });
    expect(refused!.message).toContain('70000');
    expect(accepted).toMatchObject({
      fixed: true,
      message: `${join(dir, 'gw.yaml')}: Gateway/infra/gw is accepted now`,
    });
  });
});
