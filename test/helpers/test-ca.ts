// A certificate authority made for one test file with `openssl`, and server certificates it signs
// for 127.0.0.1 and localhost: the gateway serves TLS with them and clients trust the CA alone
// (an undici Agent's `ca`, a ws client's `ca`, or NODE_EXTRA_CA_CERTS for a child process).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCa {
  dir: string;
  /** The CA certificate (PEM file). */
  certFile: string;
  pem: string;
  /** A server certificate for 127.0.0.1 and localhost, signed by this CA, written to `cert`/`key` (default: new files). */
  issue(name: string, files?: { cert: string; key: string }): { cert: string; key: string; serial: string };
}

function openssl(args: string[], cwd: string): string {
  return execFileSync('openssl', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function makeTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'skybridge-ca-'));
  const certFile = join(dir, 'ca.crt');
  const keyFile = join(dir, 'ca.key');
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=skybridge test CA'], dir);
  let n = 0;
  return {
    dir,
    certFile,
    pem: readFileSync(certFile, 'utf8'),
    issue(name, files) {
      n++;
      const key = files?.key ?? join(dir, `${name}-${n}.key`);
      const cert = files?.cert ?? join(dir, `${name}-${n}.crt`);
      const csr = join(dir, `${name}-${n}.csr`);
      const ext = join(dir, `${name}-${n}.ext`);
      writeFileSync(ext, 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
      const tmpKey = `${key}.new`;
      const tmpCert = `${cert}.new`;
      openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', tmpKey, '-out', csr, '-subj', `/CN=${name}`], dir);
      openssl(['x509', '-req', '-in', csr, '-CA', certFile, '-CAkey', keyFile, '-CAcreateserial', '-out', tmpCert, '-days', '2', '-extfile', ext], dir);
      // Written whole at the end, so a watcher never reads half a pair's file.
      writeFileSync(key, readFileSync(tmpKey));
      writeFileSync(cert, readFileSync(tmpCert));
      const serial = openssl(['x509', '-in', cert, '-noout', '-serial'], dir).trim().replace(/^serial=/, '');
      return { cert, key, serial };
    },
  };
}
