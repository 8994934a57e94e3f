// `--record-dir DIR` and its budget flags: the controller's flight recorder (engine/flight-recorder).
// A restarted controller numbers on from the last event its directory holds, so one Pod's recording
// never numbers back and its segments join across the restart.
import type { Command } from 'commander';
import { FlightRecorder, lastRecordedSeq, type FlightRecorderOptions, type LogHeader } from '@turnpike/engine';
import { CliError } from './errors.js';

export interface RecordFlags {
  recordDir?: string;
  recordSegmentBytes: string;
  recordSegmentAge: string;
  recordRetainBytes: string;
  recordRetainAge: string;
}

export function recordFlags(cmd: Command): Command {
  return cmd
    .option(
      '--record-dir <dir>',
      'keep a flight recording: the event log as segments with checkpoints in this directory, rotated and pruned ' +
        '(turnpike capture fetches it from a cluster)',
    )
    .option(
      '--record-segment-bytes <size>',
      'with --record-dir: start a new segment after this much (e.g. 32Mi)',
      '32Mi',
    )
    .option('--record-segment-age <duration>', 'with --record-dir: start a new segment after this long', '1h')
    .option(
      '--record-retain-bytes <size>',
      'with --record-dir: keep at most this much (size the volume a little larger)',
      '400Mi',
    )
    .option('--record-retain-age <duration>', 'with --record-dir: remove segments older than this', '24h');
}

const SIZE_UNITS: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };

/** Bytes of a Kubernetes-style quantity (`64Mi`, `1G`, `500000`). */
export function parseSize(v: string, flag: string): number {
  const m = /^(\d+)(k|M|G|Ki|Mi|Gi)?$/.exec(v);
  if (!m || Number(m[1]) <= 0) throw new CliError(`${flag} ${v}: not a size (e.g. 64Mi, 1Gi, 500000)`);
  return Number(m[1]) * SIZE_UNITS[m[2] ?? '']!;
}

function parseAge(v: string, flag: string): number {
  const m = /^(\d+)(s|m|h|d)$/.exec(v);
  if (!m || Number(m[1]) <= 0) throw new CliError(`${flag} ${v}: not a duration (e.g. 30m, 1h, 7d)`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

/** The recorder the flags ask for (none without --record-dir), and the number the engine counts on from. */
export function openFlightRecorder(
  flags: RecordFlags,
  header: Omit<LogHeader, 'format' | 'version' | 'run' | 'segment' | 'createdAt'>,
  log: (level: 'info' | 'warn', message: string) => void,
): { recorder?: FlightRecorder; firstSeq: number } {
  if (!flags.recordDir) return { firstSeq: 0 };
  const options: FlightRecorderOptions = {
    dir: flags.recordDir,
    header,
    segmentBytes: parseSize(flags.recordSegmentBytes, '--record-segment-bytes'),
    segmentAgeMs: parseAge(flags.recordSegmentAge, '--record-segment-age'),
    retainBytes: parseSize(flags.recordRetainBytes, '--record-retain-bytes'),
    retainAgeMs: parseAge(flags.recordRetainAge, '--record-retain-age'),
    log,
  };
  const firstSeq = lastRecordedSeq(flags.recordDir);
  try {
    const recorder = new FlightRecorder({ ...options, firstSeq });
    log(
      'info',
      `flight recorder: ${flags.recordDir} (segments of ${flags.recordSegmentBytes} or ${flags.recordSegmentAge}, ` +
        `keeping ${flags.recordRetainBytes} and ${flags.recordRetainAge}` +
        `${firstSeq ? `; numbering on from event ${firstSeq}` : ''})`,
    );
    return { recorder, firstSeq };
  } catch (e) {
    // A recorder that cannot start must not keep the controller from starting.
    log('warn', `flight recorder: cannot record into ${flags.recordDir} (${(e as Error).message}); running without it`);
    return { firstSeq: 0 };
  }
}
