// The shapes of the console's JSON API, one home for the server (console-data.ts) and the page
// (console-ui/app.ts imports these types through a project reference; no code crosses over).
import type { ConditionRow } from '../status-conditions.js';
import type { SemanticDiff } from '../semantic-diff.js';

export type { ConditionRow } from '../status-conditions.js';
export type { ConditionChange, SemanticDiff, SetChange } from '../semantic-diff.js';

/** `/api/summary`: the log as a whole. */
export interface LogSummary {
  source?: string;
  createdAt: string;
  events: number;
  translations: number;
  first?: string;
  last?: string;
  firstSeq?: number;
  lastSeq?: number;
  /** A flight recording: its segments (where each begins and ends) and the time no segment covers. */
  segments?: { run: string; segment: number; from: string; to: string; closed: boolean }[];
  gaps?: GapSummary[];
}

/** Time the log does not cover: before its first checkpoint, pruned, recording paused, a restart. */
export interface GapSummary {
  reason: string;
  /** Absent: from before the log's first record. */
  from?: string;
  to: string;
  /** The event the log resumes after (the checkpoint's), for the timeline to jump to. */
  seq: number;
}

/** `/api/event` and `/api/events`: one event of the log. */
export interface EventSummary {
  index: number;
  seq: number;
  at: string;
  source: string;
  type: string;
  kind: string;
  object: string;
  /** The log recorded a translation right after this event. */
  translated: boolean;
}

export interface Page<T> {
  total: number;
  items: T[];
}

/** `/api/density`: the log's clock in equal slices, for the timeline bar. */
export interface Density {
  from: string;
  to: string;
  events: number[];
  translations: number[];
  /** The index of the first event in each slice, -1 where there is none. */
  firstIndex: number[];
  /** 1 where time no segment covers falls in the slice (a gap). */
  gaps: number[];
  /** 1 where a segment begins in the slice. */
  boundaries: number[];
}

/** `/api/objects`: an object with a status at a moment; `trouble` is decided on the server. */
export interface ObjectSummary {
  key: string;
  conditions: Omit<ConditionRow, 'message'>[];
  trouble: boolean;
}

/** `/api/object`: one object at a moment. */
export interface ObjectDetail {
  key: string;
  found: boolean;
  conditions: ConditionRow[];
  explain: string[];
  xds: unknown;
}

/** `/api/history`: where an object's conditions changed over the log. */
export interface HistoryChange {
  seq: number;
  at: string;
  event: string;
  before: string[];
  after: string[];
}

export interface History {
  changes: HistoryChange[];
  probes: number;
}

/** `/api/diff`. */
export type MomentDiff = SemanticDiff;
