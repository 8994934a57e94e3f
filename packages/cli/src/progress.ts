// A progress bar on stderr, shown only on a TTY.
export function progressBar(label: string): ((done: number, total: number) => void) & { end(): void } {
  const tty = process.stderr.isTTY;
  let last = -1;
  const f = ((done: number, total: number) => {
    if (!tty || total < 200) return;
    const pct = Math.floor((100 * done) / total);
    if (pct === last) return;
    last = pct;
    const width = 30;
    const fill = Math.round((width * done) / total);
    process.stderr.write(`\r${label} [${'#'.repeat(fill)}${' '.repeat(width - fill)}] ${pct}% (${done}/${total})`);
  }) as ((done: number, total: number) => void) & { end(): void };
  f.end = () => {
    if (tty && last >= 0) process.stderr.write('\n');
  };
  return f;
}
