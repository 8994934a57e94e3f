// Values that live as long as the translation's results are kept compact: every young-generation GC
// copies what survives it (a first translation at 100k routes spends a third of its time there), and
// the heap holds it until the next change. Measured on Node 20 (V8 11.3):
// - A string built by concatenation is a rope (a tree of ~32-byte ConsString nodes): a 45-character
//   name from nine pieces takes ~260 bytes, ~80 flat. Reading a character flattens a rope in place (a
//   number conversion no longer does); the GC then drops its nodes.
// - An array grown by push from empty gets room for 17 elements (~195 bytes with one), a copy of it
//   room for what it holds (~67 bytes).

/** The same string, flattened. */
export function flat(s: string): string {
  s.charCodeAt(0);
  return s;
}

/**
 * The array, or a copy of it with no spare room once it is built by push. A long one is left as it is:
 * its spare room is at most half its size, and copying it costs more than it saves.
 */
export function fitted<T>(list: T[]): T[] {
  return list.length === 0 || list.length > 16 ? list : list.slice();
}
