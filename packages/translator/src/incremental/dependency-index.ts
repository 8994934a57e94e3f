// The reverse of what each memoised piece read: dependency key → the pieces that read it. A piece
// records its keys each time it is computed (replacing the previous set) and is dropped with them.
// The reverse side is brought up to date when it is next asked, or earlier in idle time (`index`): a
// first translation records 135k keys at 10k routes, and indexing them then was 15% of it, paid on the
// way to the first config for a question only the next translation asks.
export class DependencyIndex {
  /** A key read by one piece holds its name; by more, a set (most keys have one reader: no set each). */
  private readonly dependents = new Map<string, string | Set<string>>();
  private readonly dependencies = new Map<string, Set<string>>();
  /** Pieces recorded and not yet in `dependents`, with their keys. */
  private readonly unindexed = new Map<string, Set<string>>();

  record(piece: string, keys: Set<string>): void {
    this.drop(piece);
    this.dependencies.set(piece, keys);
    this.unindexed.set(piece, keys);
  }

  drop(piece: string): void {
    const keys = this.dependencies.get(piece);
    if (!keys) return;
    this.dependencies.delete(piece);
    if (this.unindexed.delete(piece)) return;
    for (const k of keys) {
      const readers = this.dependents.get(k);
      if (readers === piece) this.dependents.delete(k);
      else if (readers !== undefined && typeof readers !== 'string') {
        readers.delete(piece);
        if (readers.size === 0) this.dependents.delete(k);
      }
    }
  }

  /** Indexes recorded pieces until `deadline` (performance.now()); true when some are left. */
  index(deadline = Number.POSITIVE_INFINITY): boolean {
    let n = 0;
    for (const [piece, keys] of this.unindexed) {
      if (++n % 64 === 0 && performance.now() >= deadline) return true;
      this.unindexed.delete(piece);
      for (const k of keys) {
        const readers = this.dependents.get(k);
        if (readers === undefined) this.dependents.set(k, piece);
        else if (typeof readers !== 'string') readers.add(piece);
        else if (readers !== piece) this.dependents.set(k, new Set([readers, piece]));
      }
    }
    return false;
  }

  /**
   * Pieces that read any of `keys`. Of a set, whichever is smaller is walked: a first translation
   * changes every key (50 000 at 10k routes) while a stage's pieces may have read a few hundred.
   */
  dependentsOf(keys: ReadonlySet<string>, into: Set<string> = new Set()): Set<string> {
    this.index();
    const add = (readers: string | Set<string>) => {
      if (typeof readers === 'string') into.add(readers);
      else for (const p of readers) into.add(p);
    };
    if (keys.size > this.dependents.size) {
      for (const [k, readers] of this.dependents) if (keys.has(k)) add(readers);
    } else {
      for (const k of keys) {
        const readers = this.dependents.get(k);
        if (readers !== undefined) add(readers);
      }
    }
    return into;
  }
}

/** One DependencyIndex per stage (by piece prefix, e.g. `route:`): a stage asks only about its own pieces. */
export class PieceDependencies {
  private readonly byPrefix = new Map<string, DependencyIndex>();

  private stage(prefix: string): DependencyIndex {
    let index = this.byPrefix.get(prefix);
    if (!index) this.byPrefix.set(prefix, (index = new DependencyIndex()));
    return index;
  }

  record(prefix: string, id: string, keys: Set<string>): void {
    this.stage(prefix).record(id, keys);
  }

  drop(prefix: string, id: string): void {
    this.byPrefix.get(prefix)?.drop(id);
  }

  /** Indexes recorded pieces until `deadline`; true when some are left. */
  index(deadline?: number): boolean {
    for (const index of this.byPrefix.values()) if (index.index(deadline)) return true;
    return false;
  }

  /** Ids of the pieces under `prefix` that read any of `keys`. */
  dependentsOf(prefix: string, keys: ReadonlySet<string>, into: Set<string> = new Set()): Set<string> {
    return this.byPrefix.get(prefix)?.dependentsOf(keys, into) ?? into;
  }
}
