import { readFileSync } from 'node:fs';
import { CliError, EXIT } from './cliError.ts';

/** The text of a file the user named (`-`: standard input); an unreadable file is a usage error (exit 2). */
export function readUserFile(path: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new CliError(EXIT.usage, 'unreadable-file', `cannot read ${path}: ${why}`, { cause: err });
  }
}

/** A file the user named, parsed as JSON; unreadable or malformed is a usage error (exit 2). */
export function readJsonFile(path: string): unknown {
  const text = readUserFile(path);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new CliError(EXIT.usage, 'bad-json', `${path} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
}
