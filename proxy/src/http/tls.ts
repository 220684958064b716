// The listeners' certificate: read from two PEM files at start (a bad pair stops the start) and
// again whenever either file changes, so a renewed certificate (cert-manager rewriting a mounted
// Secret, an operator replacing the files) is served without a restart. A new pair that cannot be
// read or does not match keeps the old one serving, and says so in the log.
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { log } from '../log.ts';

export interface TlsFiles {
  cert: string;
  key: string;
}

/** The pair as TLS options; throws a message naming the file when it cannot be read or the key does not fit the certificate. */
export function readTls(files: TlsFiles): SecureContextOptions {
  const read = (path: string, what: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new Error(`--tls-${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  const options = { cert: read(files.cert, 'cert'), key: read(files.key, 'key') };
  try {
    // Parses both and checks that the key belongs to the certificate, before any client sees it.
    createSecureContext(options);
  } catch (err) {
    throw new Error(`--tls-cert ${files.cert} / --tls-key ${files.key}: ${(err as Error).message}`);
  }
  return options;
}

/** Something serving TLS whose context can be replaced (https.Server). */
export interface TlsTarget {
  setSecureContext(options: SecureContextOptions): void;
}

/**
 * Re-reads the pair when a file in either file's directory changes (a mounted Secret is replaced
 * by swapping a symlink, which a watch on the file itself would miss), debounced: a writer that
 * replaces the key and then the certificate is read once both are there. Answers the stopper.
 */
export function watchTls(files: TlsFiles, targets: readonly TlsTarget[], onReload?: (ok: boolean) => void, debounceMs = 200): { close(): void } {
  const dirs = new Set([dirname(resolve(files.cert)), dirname(resolve(files.key))]);
  const names = new Set([basename(files.cert), basename(files.key)]);
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const reload = (): void => {
    timer = undefined;
    if (closed) return;
    try {
      const options = readTls(files);
      for (const t of targets) t.setSecureContext(options);
      log.info('TLS certificate reloaded', { cert: files.cert });
      onReload?.(true);
    } catch (err) {
      log.warn('TLS certificate not reloaded: the previous one keeps serving', { error: (err as Error).message });
      onReload?.(false);
    }
  };
  const watchers: FSWatcher[] = [];
  for (const dir of dirs) {
    try {
      const w = watch(dir, { persistent: false }, (_event, name) => {
        // Kubernetes swaps `..data`; other writers touch the files themselves. Unrelated files are ignored.
        if (name !== null && !names.has(name) && !name.startsWith('..')) return;
        if (timer) clearTimeout(timer);
        timer = setTimeout(reload, debounceMs);
      });
      w.on('error', (err) => log.warn('TLS certificate directory cannot be watched: changes apply at the next restart', { dir, error: err.message }));
      watchers.push(w);
    } catch (err) {
      log.warn('TLS certificate directory cannot be watched: changes apply at the next restart', { dir, error: (err as Error).message });
    }
  }
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
}
