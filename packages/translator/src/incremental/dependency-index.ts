// The reverse of what each memoised piece read: dependency key → the pieces that read it. A piece
// records its keys each time it is computed (replacing the previous set) and is dropped with them.
export class DependencyIndex {
  /** A key read by one piece holds its name; by more, a set (most keys have one reader: no set each). */
  private readonly dependents = new Map<string, string | Set<string>>();
  private readonly dependencies = new Map<string, Set<string>>();

  record(piece: string, keys: Set<string>): void {
    this.drop(piece);
    this.dependencies.set(piece, keys);
    for (const k of keys) {
      const readers = this.dependents.get(k);
      if (readers === undefined) this.dependents.set(k, piece);
      else if (typeof readers !== 'string') readers.add(piece);
      else if (readers !== piece) this.dependents.set(k, new Set([readers, piece]));
    }
  }

  drop(piece: string): void {
    const keys = this.dependencies.get(piece);
    if (!keys) return;
    this.dependencies.delete(piece);
    for (const k of keys) {
      const readers = this.dependents.get(k);
      if (readers === piece) this.dependents.delete(k);
      else if (readers !== undefined && typeof readers !== 'string') {
        readers.delete(piece);
        if (readers.size === 0) this.dependents.delete(k);
      }
    }
  }

  /**
   * Pieces that read any of `keys`. Of a set, whichever is smaller is walked: a first translation
   * changes every key (50 000 at 10k routes) while a stage's pieces may have read a few hundred.
   */
  dependentsOf(keys: ReadonlySet<string>, into: Set<string> = new Set()): Set<string> {
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

  private index(prefix: string): DependencyIndex {
    let index = this.byPrefix.get(prefix);
    if (!index) this.byPrefix.set(prefix, (index = new DependencyIndex()));
    return index;
  }

  record(prefix: string, id: string, keys: Set<string>): void {
    this.index(prefix).record(id, keys);
  }

  drop(prefix: string, id: string): void {
    this.byPrefix.get(prefix)?.drop(id);
  }

  /** Ids of the pieces under `prefix` that read any of `keys`. */
  dependentsOf(prefix: string, keys: ReadonlySet<string>, into: Set<string> = new Set()): Set<string> {
    return this.byPrefix.get(prefix)?.dependentsOf(keys, into) ?? into;
  }
}
