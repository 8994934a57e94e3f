#!/usr/bin/env node
// Keeps sources readable where a formatter cannot (long string literals, comments, import paths):
// no file under packages/*/src (generated code aside) may have more than 1% of its lines over 120
// characters. Run by `pnpm lint`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const files = execFileSync('git', ['ls-files', 'packages/*/src/**.ts', 'packages/*/src/*.ts'], { encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && !f.includes('/generated/'));
const offenders = [];
for (const file of files) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const long = lines.map((l, i) => [l.length, i + 1]).filter(([n]) => n > 120);
  if (long.length * 100 > lines.length)
    offenders.push(
      `${file}: ${long.length} of ${lines.length} lines over 120 (lines ${long.map(([, i]) => i).join(', ')})`,
    );
}
if (offenders.length) {
  process.stderr.write(`${offenders.join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(`line length: ${files.length} source files, none with more than 1% of lines over 120\n`);
