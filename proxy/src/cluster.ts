// Several worker processes sharing one listening port, so the gateway uses every core. Each worker
// loads and watches the config itself; the primary only keeps the workers alive.
import cluster from 'node:cluster';
import { log } from './log.ts';

export function runPrimary(workers: number): void {
  let stopping = false;
  for (let i = 0; i < workers; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    log.error('worker exited; starting a new one', { worker: worker.id, code, signal });
    cluster.fork();
  });
  const stop = () => {
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    setTimeout(() => process.exit(0), 10_000).unref();
    let alive = Object.keys(cluster.workers ?? {}).length;
    cluster.on('exit', () => {
      if (--alive <= 0) process.exit(0);
    });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  log.info('skybridge primary started', { workers });
}
