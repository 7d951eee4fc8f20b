/**
 * Certificates for TLS tests, made by Debian's openssl: a test CA, and server certificates it
 * signs for the names asked. Node cannot issue X.509 certificates itself.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestCa {
  readonly cert: string;
  /** A key and certificate for `name`, signed by this CA. */
  issue(name: string): Promise<{ readonly key: string; readonly cert: string }>;
  close(): Promise<void>;
}

export async function testCa(): Promise<TestCa> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-tls-'));
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', ['req', '-x509', ...ecKey, '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.crt'), '-days', '2', '-subj', '/CN=lbdns test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign']);
  let serial = 0;
  return {
    cert: await readFile(join(dir, 'ca.crt'), 'utf8'),
    issue: async (name) => {
      const base = join(dir, `server-${++serial}`);
      await writeFile(`${base}.ext`, `subjectAltName=DNS:${name}\nextendedKeyUsage=serverAuth\n`);
      await run('openssl', ['req', '-new', ...ecKey, '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${name}`]);
      await run('openssl', ['x509', '-req', '-in', `${base}.csr`, '-CA', join(dir, 'ca.crt'), '-CAkey', join(dir, 'ca.key'), '-set_serial', String(serial), '-out', `${base}.crt`, '-days', '2', '-extfile', `${base}.ext`]);
      return { key: await readFile(`${base}.key`, 'utf8'), cert: await readFile(`${base}.crt`, 'utf8') };
    },
    close: () => rm(dir, { recursive: true, force: true }),
  };
}
