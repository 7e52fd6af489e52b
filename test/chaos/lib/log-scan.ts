import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SecretHit {
  file: string;
  /** Which secret, by position in the list given (never the value itself, so a failure message leaks nothing). */
  secretIndex: number;
}

/** Every (file, secret) pair where the secret's text appears in the file. */
export function findSecretsInFiles(paths: readonly string[], secrets: readonly string[]): SecretHit[] {
  const hits: SecretHit[] = [];
  for (const file of paths) {
    const text = readFileSync(file, 'utf8');
    secrets.forEach((secret, secretIndex) => {
      if (secret.length > 0 && text.includes(secret)) hits.push({ file, secretIndex });
    });
  }
  return hits;
}

export function logFilesIn(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => name.endsWith('.log'))
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}
