import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import type { Workspace } from '@clawgym/core';

/**
 * SQLite through Node's own `node:sqlite` (Node 22 and 24): no native addon to build, so the
 * same install works on every supported Node and no addon compiled for one Node can crash
 * another. Databases are opened from files (Node 22 cannot open bytes in memory).
 */
export type Database = DatabaseSync;

/**
 * `node:sqlite`, loaded at the first database rather than with the plugin: on Node 22 loading it
 * prints an ExperimentalWarning, which listing plugins or running tasks without SQLite should not.
 */
let sqlite: typeof import('node:sqlite') | undefined;
function openDb(path: string): Database {
  sqlite ??= require('node:sqlite') as typeof import('node:sqlite');
  return new sqlite.DatabaseSync(path);
}

/** A new in-memory database. */
export function memoryDb(): Database {
  return openDb(':memory:');
}

/** Every row of `query` as arrays of cells, in column order (two columns may share a name). */
export function rowsOf(db: Database, query: string): unknown[][] {
  const statement = db.prepare(query);
  statement.setReturnArrays(true);
  return statement.all() as unknown as unknown[][];
}

/** A database built in a scratch file, as the bytes of a .db file. */
export function sqliteBytes(build: (db: Database) => void): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'clawgym-sqlite-'));
  try {
    const db = openDb(join(dir, 'db'));
    try { build(db); } finally { db.close(); }
    return readFileSync(join(dir, 'db'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Open a workspace's SQLite file for reading, with what an agent left uncommitted in a `-wal`
 * file applied. Calls `use` and closes the database; `{ error }` when it is not a database.
 * Both files are copied first, so SQLite replays the log without touching the agent's files.
 */
export async function withWorkspaceDb<T>(ws: Workspace, file: string, use: (db: Database) => T): Promise<{ value: T } | { error: string }> {
  const tmp = await mkdtemp(join(tmpdir(), 'clawgym-sqlite-'));
  let db: Database | undefined;
  try {
    await writeFile(join(tmp, 'db'), await ws.readFile(file));
    if (await ws.exists(`${file}-wal`)) await writeFile(join(tmp, 'db-wal'), await ws.readFile(`${file}-wal`));
    db = openDb(join(tmp, 'db'));
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return { value: use(db) };
  } catch (e) {
    return { error: `${file}: ${(e as Error).message}` };
  } finally {
    db?.close();
    await rm(tmp, { recursive: true, force: true });
  }
}
