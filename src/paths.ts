import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The package's root: the first directory above `from` holding package.json. Files that are
 * not compiled (the live chat widget) or are built beside the code (the console) are found
 * from it, whether the caller runs from src/ (tests, tsx) or from dist/src/ (`npm start`,
 * the Docker image).
 */
export function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
