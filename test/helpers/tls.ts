import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A self-signed certificate for localhost (openssl), valid two days, in a directory of its own: what a test's TLS broker presents. */
export interface LocalCertificate {
  dir: string;
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
  remove(): void;
}

export function localCertificate(): LocalCertificate {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-tls-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost', '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' });
  return { dir, certFile, keyFile, cert: fs.readFileSync(certFile, 'utf8'), key: fs.readFileSync(keyFile, 'utf8'), remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
