// What only the leader does with a translation: write statuses, apply each Gateway's proxy objects
// and keep the record of referenced Secrets for the live tools up to date. Every replica keeps the
// last translation, so a replica that gains the lease writes everything at once, and the status
// writer is given whole outputs until it has written them all (which also clears entries a previous
// leader left on objects no longer ours).
import type { EngineOutput } from '@turnpike/engine';
import type { InfraApplier, ReferenceRecordPublisher, StatusWriter } from '@turnpike/kube';
import type { Sink } from '../controller.js';

export class LeaderWrites {
  private last?: EngineOutput;
  private writtenAll = false;

  constructor(
    private readonly writer: StatusWriter,
    /** Created after the elector starts: the CA and the lease call in before it exists. */
    private readonly infra: () => InfraApplier | undefined,
    private leading: boolean,
    private readonly record?: ReferenceRecordPublisher,
  ) {}

  get isLeading(): boolean {
    return this.leading;
  }

  startedLeading(): void {
    this.leading = true;
    if (!this.last) return;
    this.writer.update(this.last.result, this.last.snapshot);
    this.infra()?.update(this.last.result.infraIR);
    this.record?.update(this.last.snapshot, true);
    this.writtenAll = true;
  }

  stoppedLeading(): void {
    this.leading = false;
    this.writtenAll = false;
  }

  /** The sinks: keep the last output, write statuses, apply infra, record referenced Secrets. */
  sinks(onClose: () => void): Sink[] {
    return [
      { name: 'last', accept: (out) => void (this.last = out) },
      {
        name: 'status-writer',
        accept: (out) => {
          if (!this.leading) return;
          this.writer.update(out.result, out.snapshot, this.writtenAll ? out.changes.statuses : undefined);
          this.writtenAll = true;
        },
        close: () => this.writer.stop(),
      },
      {
        name: 'infra-applier',
        accept: (out) => {
          if (this.leading && out.changes.infra.length) this.infra()?.update(out.result.infraIR);
        },
        close: () => {
          this.infra()?.stop();
          onClose();
        },
      },
      {
        name: 'reference-record',
        accept: (out) => {
          if (this.leading) this.record?.update(out.snapshot);
        },
        close: () => this.record?.stop(),
      },
    ];
  }
}
