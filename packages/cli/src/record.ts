// `--record FILE`: a recorded event log is evidence; an existing one is never overwritten.
import { existsSync } from 'node:fs';
import { EventLogWriter } from '@turnpike/engine';
import { CliError } from './errors.js';

export function openRecording(file: string, header: ConstructorParameters<typeof EventLogWriter>[1]): EventLogWriter {
  if (existsSync(file))
    throw new CliError(
      `--record ${file}: the file exists; move it away or name another (an event log is not overwritten)`,
    );
  return new EventLogWriter(file, header);
}
