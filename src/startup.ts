import { ConfigError } from './common/config.js';
import { PluginLoadError } from './kernel/model/index.js';
import { StartupError } from './common/errors.js';

/** The one line an operator reads for a refusal at start-up; undefined for a bug. */
function startupMessage(err: unknown): string | undefined {
  if (err instanceof ConfigError) return `Configuration error: ${err.message}`;
  if (err instanceof PluginLoadError) return `Plugin error: ${err.message}`;
  if (err instanceof StartupError) return err.message;
  return undefined;
}

/**
 * Runs an entry point (server, worker, the CLIs): a refusal at start-up (a bad setting, a bad
 * plugin, a database that cannot be migrated) prints one line and exits 1; anything else is a
 * bug and prints in full. A returned number is the exit code; a long-running main returns
 * nothing and stops on its own signal handling.
 */
export function runMain(main: () => Promise<number | void>, signals?: { readonly stopping: boolean }): void {
  main().then(
    (code) => {
      if (typeof code === 'number') process.exit(code);
    },
    (err: unknown) => {
      // A signal stopped start-up and closed what main was using: its exit (0) is under way.
      if (signals?.stopping) return;
      console.error(startupMessage(err) ?? err);
      process.exit(1);
    },
  );
}

