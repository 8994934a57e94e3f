// One pending run of a writer's work loop: asking again while a run is pending does not add
// another (the pending one will see the newest desired state), and nothing runs after stop.
export class WorkTimer {
  private timer?: NodeJS.Timeout;
  private isStopped = false;

  constructor(private readonly work: () => Promise<void>) {}

  get stopped(): boolean {
    return this.isStopped;
  }

  /** Runs the work in `ms`, unless a run is already pending or the timer was stopped. */
  schedule(ms: number): void {
    if (this.isStopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.work();
    }, ms);
  }

  stop(): void {
    this.isStopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
