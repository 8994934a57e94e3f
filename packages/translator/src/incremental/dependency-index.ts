// The reverse of what each memoised piece read: dependency key → the pieces that read it. A piece
// records its keys each time it is computed (replacing the previous set) and is dropped with them.
export class DependencyIndex {
  private readonly dependents = new Map<string, Set<string>>();
  private readonly dependencies = new Map<string, Set<string>>();

  record(piece: string, keys: Set<string>): void {
    this.drop(piece);
    this.dependencies.set(piece, keys);
    for (const k of keys) {
      let s = this.dependents.get(k);
      if (!s) this.dependents.set(k, (s = new Set()));
      s.add(piece);
    }
  }

  drop(piece: string): void {
    const keys = this.dependencies.get(piece);
    if (!keys) return;
    this.dependencies.delete(piece);
    for (const k of keys) {
      const s = this.dependents.get(k);
      if (!s) continue;
      s.delete(piece);
      if (s.size === 0) this.dependents.delete(k);
    }
  }

  /** Pieces that read any of `keys`. */
  dependentsOf(keys: Iterable<string>, into: Set<string> = new Set()): Set<string> {
    for (const k of keys) for (const p of this.dependents.get(k) ?? []) into.add(p);
    return into;
  }

  dependenciesOf(piece: string): ReadonlySet<string> | undefined {
    return this.dependencies.get(piece);
  }
}
