// Live progress while a scenario runs: a status line redrawn on a terminal, plain lines otherwise.
import type { Cluster } from '../cluster/cluster.js';
import { formatDuration } from '../clock/virtual-clock.js';

export class Progress {
  private timer: NodeJS.Timeout | undefined;
  private cluster: Cluster | undefined;
  private step = '';

  constructor(private readonly out: NodeJS.WriteStream, private readonly tty: boolean) {}

  attach(cluster: Cluster): void {
    this.cluster = cluster;
    if (this.tty) this.timer = setInterval(() => this.draw(), 250);
  }

  setStep(text: string): void {
    this.step = text;
    if (!this.tty) this.out.write(`step: ${text}\n`);
    else this.draw();
  }

  status(): string {
    const c = this.cluster;
    if (c === undefined) return '';
    const pods = c.store.list('Pod');
    const running = pods.filter((p) => p.status?.phase === 'Running').length;
    const scheduled = pods.filter((p) => p.spec?.nodeName).length;
    const pvcs = c.store.list('PersistentVolumeClaim');
    const bound = pvcs.filter((p) => p.status?.phase === 'Bound').length;
    return `[+${formatDuration(c.clock.now())}] pods ${running} running / ${scheduled} scheduled / ${pods.length}; pvcs ${bound} bound / ${pvcs.length}; volumes ${c.store.count('PersistentVolume')}; events ${c.events.events.length} | ${this.step}`;
  }

  private draw(): void {
    const s = this.status();
    const width = this.out.columns ?? 120;
    this.out.write(`\r\x1b[2K${s.slice(0, width - 1)}`);
  }

  /** Clears the status line so other output can be printed. */
  clear(): void {
    if (this.tty) this.out.write('\r\x1b[2K');
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }
}
