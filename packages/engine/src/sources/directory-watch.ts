// File notifications for a manifest tree: one non-recursive watcher per directory. Node 20's
// recursive fs.watch on Linux watches each file's inode, so after the first save that replaces a file
// (write a temporary file, rename it over the old one, as most editors and tools do) that file is no
// longer watched, and later saves were only seen by the periodic rescan. A directory's watcher sees
// every entry created, renamed or written in it, whatever the inode.
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export class DirectoryWatchers {
  private readonly watchers = new Map<string, FSWatcher>();

  /** `onPath` gets the path an event names (or undefined when the event names none). */
  constructor(private readonly onPath: (path: string | undefined) => void) {}

  /** Watches exactly these directories (those of the tree after a scan). */
  sync(directories: ReadonlySet<string>): void {
    for (const [dir, w] of this.watchers)
      if (!directories.has(dir)) {
        w.close();
        this.watchers.delete(dir);
      }
    for (const dir of directories) if (!this.watchers.has(dir)) this.add(dir, (name) => join(dir, name));
  }

  /** A single file as the root: its directory is watched, and only events for its name count. */
  watchFile(file: string): void {
    const name = basename(file);
    this.add(dirname(file), (entry) => (entry === name ? file : undefined), true);
  }

  private add(dir: string, pathOf: (name: string) => string | undefined, onlyNamed = false): void {
    let w: FSWatcher;
    try {
      w = watch(dir, (_event, name) => {
        const path = name ? pathOf(String(name)) : undefined;
        if (path || !onlyNamed) this.onPath(path);
      });
    } catch {
      return; // gone already, or not watchable: the rescan still sees it
    }
    w.on('error', () => {
      w.close();
      this.watchers.delete(dir);
    });
    this.watchers.set(dir, w);
  }

  close(): void {
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}
