import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, databaseFile, decodeKey, type Config } from '../common/config.js';
import { createKeyring, newKey, type Keyring } from './keyring.js';

/** The embedded default's key file, beside its database. */
export function keyFileOf(config: Config): string | undefined {
  const file = databaseFile(config.database);
  return file === undefined ? undefined : path.join(path.dirname(file), 'secret.key');
}

/**
 * The keyring of SECRET_KEYS; without it (the embedded default only: config refuses MySQL
 * without it) the key file in the data folder, made on first start with mode 0600. An
 * in-memory database gets a key that lives as long as it does.
 */
export function loadKeyring(config: Config): Keyring {
  if (config.secretKeys) return createKeyring(config.secretKeys);
  const file = keyFileOf(config);
  if (!file) return createKeyring([decodeKey(newKey())!]);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (!fs.existsSync(file)) {
    // Written aside, then linked into place: of two processes starting at once, one key wins
    // whole and both read it.
    const aside = `${file}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(aside, `${newKey()}\n`, { mode: 0o600 });
      fs.linkSync(aside, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new ConfigError('SECRET_KEYS', `unset, and the key file ${file} cannot be made: ${(err as Error).message}`);
    } finally {
      fs.rmSync(aside, { force: true });
    }
  }
  const key = decodeKey(fs.readFileSync(file, 'utf8'));
  if (!key) throw new ConfigError('SECRET_KEYS', `unset, and ${file} does not hold a base64 32-byte key (restore it from your backup; without it the webhook secrets cannot be read)`);
  return createKeyring([key]);
}
