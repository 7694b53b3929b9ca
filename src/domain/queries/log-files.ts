/** Operators reading the service's own log files: every file opened is on the audit log, whoever opened it and how. */
import type { Deps } from '../../types.js';
import { resolveLogFile, type CheckedLogFile } from '../../platform/logging/files.js';
import { actorName, audit, type Actor } from '../audit.js';

/** A file listed in LOG_DIR, checked and audited before it is read; undefined when there is none of that name. */
export async function openLogFile(
  services: Deps<'config' | 'logger'>,
  name: string,
  actor: Actor,
): Promise<CheckedLogFile | undefined> {
  const file = await resolveLogFile(services.config.logDir, name);
  if (!file) return undefined;
  audit(
    services,
    { actor, action: 'log_view', subject: name, outcome: 'opened' },
    `${actorName(actor)} viewed a log file`,
    { file: name },
  );
  return file;
}
