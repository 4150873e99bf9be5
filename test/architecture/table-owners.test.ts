/**
 * Holds "one owner per table" for `datasets`: only `datasets/dataset-queries.ts` queries it, so its columns,
 * locks and timestamps are handled in one place; the search SQL (`datasets/search*.ts`) may read it in its
 * own `sql` templates (docs/architecture.md, under Ranks). Likewise `rate_limits`, owned by `db/rate-limit-store.ts`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkTableOwnership, type TableOwnership } from './table-queries.js';

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

const datasetsRule: TableOwnership = {
  table: 'datasets',
  owner: 'datasets/dataset-queries.ts',
  rawReaders: ['datasets/search.ts', 'datasets/search-filters.ts', 'datasets/search-semantic.ts', 'datasets/search-embeddings.ts'],
  exemptFolders: ['db/migrations/'],
};

describe('the datasets table', () => {
  it('is queried only by datasets/dataset-queries.ts (and read by the search SQL)', () => {
    assert.deepEqual(checkTableOwnership(src, datasetsRule), []);
  });
});

describe('the rate_limits table', () => {
  // Decision 0017: the shared rate-limit windows are counted and swept in one file.
  it('is queried only by db/rate-limit-store.ts', () => {
    assert.deepEqual(checkTableOwnership(src, { table: 'rate_limits', owner: 'db/rate-limit-store.ts', rawReaders: [], exemptFolders: ['db/migrations/'] }), []);
  });
});

describe('the github_deliveries table', () => {
  it('is queried only by conversion/github-deliveries.ts', () => {
    assert.deepEqual(checkTableOwnership(src, { table: 'github_deliveries', owner: 'conversion/github-deliveries.ts', rawReaders: [], exemptFolders: ['db/migrations/'] }), []);
  });
});

describe('the recording catalogue and its fences', () => {
  // Decision 0023: the fences change in the transaction that changes the rows, so one file writes both; so
  // does the commit the catalogue is whole at (`catalogue_syncs`), recorded with the rows.
  for (const table of ['recordings', 'recording_facets', 'recording_words', 'recording_terms', 'recording_ranges', 'catalogue_syncs']) {
    it(`${table} is queried only by recordings/catalogue-queries.ts (the dataset search reads the subject fence)`, () => {
      const rawReaders = table === 'recording_facets' ? ['datasets/search-filters.ts'] : [];
      assert.deepEqual(checkTableOwnership(src, { table, owner: 'recordings/catalogue-queries.ts', rawReaders, exemptFolders: ['db/migrations/'] }), []);
    });
  }
});

describe('the dataset_members table', () => {
  // Decision 0028: who may read a dataset is decided with its members, so their rows are read and written in
  // one file; the search SQL reads them in its visibility condition.
  it('is queried only by datasets/dataset-members-queries.ts (and read by the search SQL)', () => {
    assert.deepEqual(
      checkTableOwnership(src, { table: 'dataset_members', owner: 'datasets/dataset-members-queries.ts', rawReaders: ['datasets/search-filters.ts'], exemptFolders: ['db/migrations/'] }),
      [],
    );
  });
});

describe('the annotation tables', () => {
  // Decision 0028: a recording's revision and its kept changes move together, in one file's transactions.
  for (const table of ['annotations', 'annotation_revisions', 'annotation_changes']) {
    it(`${table} is queried only by annotations/annotation-queries.ts`, () => {
      assert.deepEqual(checkTableOwnership(src, { table, owner: 'annotations/annotation-queries.ts', rawReaders: [], exemptFolders: ['db/migrations/'] }), []);
    });
  }
});

describe('the storage ledger', () => {
  // Decision 0051: grants are checked against the quota and written in one transaction, in one file; each
  // dataset's sum is written by the trigger alone.
  for (const table of ['storage_grants', 'dataset_storage']) {
    it(`${table} is queried only by datasets/storage-quota.ts`, () => {
      assert.deepEqual(checkTableOwnership(src, { table, owner: 'datasets/storage-quota.ts', rawReaders: [], exemptFolders: ['db/migrations/'] }), []);
    });
  }
});

describe('the repository_holders table', () => {
  // Decision 0026: which node holds a hosted repository is claimed and read in one file.
  it('is queried only by datasets/repository-holders.ts', () => {
    assert.deepEqual(checkTableOwnership(src, { table: 'repository_holders', owner: 'datasets/repository-holders.ts', rawReaders: [], exemptFolders: ['db/migrations/'] }), []);
  });
});

describe('the table-owner check itself', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'nds-owners-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const tree = (files: Record<string, string>) => {
    const dir = mkdtempSync(path.join(root, 't-'));
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    }
    return dir;
  };
  const clean = {
    'datasets/dataset-queries.ts': "export const f = (db: any) => db.selectFrom('datasets').innerJoin('users', 'users.id', 'datasets.owner_id').execute();\n",
    'datasets/search.ts': 'export const q = (sql: any, w: any) => sql`select d.* from datasets d join users u on u.id = d.owner_id where ${w}`;\n',
    'db/migrations/0001-datasets.ts': "export const up = (db: any, sql: any) => db.schema.createTable('datasets').addColumn('owner_id', 'integer', (c: any) => c.references('users.id')).execute().then(() => sql`update datasets set name = name`);\n",
    'cli/datasets-commands.ts': [
      '// Lists what it reads from datasets, and never updates datasets itself.',
      "export const c = (program: any) => program.command('datasets').description('datasets: list; join datasets to a project');",
      "export const m = 'No row in datasets for that id; update datasets first.';",
      "export const other = (db: any) => db.selectFrom('datasets_archive').selectAll().execute();",
      '',
    ].join('\n'),
  };

  it('passes a tree whose queries of the table are in its owner (and raw reads in the search SQL)', () => {
    assert.deepEqual(checkTableOwnership(tree(clean), datasetsRule), []);
  });

  it('names the file and line of a Kysely query, a join and a qualified column elsewhere', () => {
    const problems = checkTableOwnership(
      tree({
        ...clean,
        'routes/bad-routes.ts': [
          'export const r = async (db: any) => {',
          "  const row = await db.selectFrom('datasets').select('id').executeTakeFirst();",
          "  await db.updateTable('datasets').set({ name: 'x' }).execute();",
          "  return db.selectFrom('publication_requests as r').innerJoin('datasets as d', 'd.id', 'r.dataset_id').select('datasets.name').execute();",
          '};',
          '',
        ].join('\n'),
      }),
      datasetsRule,
    );
    assert.ok(problems.some((p) => p.startsWith("routes/bad-routes.ts:2: queries datasets outside datasets/dataset-queries.ts: db.selectFrom('datasets')")), problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('routes/bad-routes.ts:3: ') && p.includes("updateTable('datasets')")), problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('routes/bad-routes.ts:4: ') && p.includes("innerJoin('datasets as d'")), problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('routes/bad-routes.ts:4: ') && p.includes("'datasets.name'")), problems.join('\n'));
    assert.equal(problems.length, 4, problems.join('\n'));
  });

  it('names raw SQL that reads or writes the table outside its owner, and a write in the search SQL', () => {
    const problems = checkTableOwnership(
      tree({
        ...clean,
        'conversion/raw-lookup.ts': 'export const q = (sql: any, id: string) => sql`\n  select *\n  from "datasets"\n  where id = ${id}`;\nexport const r = (sql: any) => sql.raw(\'insert into public.datasets (id) values (1)\');\n',
        'datasets/search.ts': "export const s = (sql: any) => sql`select d.* from datasets d`;\nexport const t = (sql: any, db: any) => sql`update datasets set tasks = '{}'`.execute(db);\n",
      }),
      datasetsRule,
    );
    assert.ok(problems.some((p) => p.startsWith('conversion/raw-lookup.ts:3: ') && p.includes('from "datasets"')), problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('conversion/raw-lookup.ts:5: ') && p.includes('into public.datasets')), problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('datasets/search.ts:2: ') && p.includes('update datasets')), problems.join('\n'));
    assert.equal(problems.length, 3, problems.join('\n'));
  });
});
