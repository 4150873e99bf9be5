/**
 * Upgrading to the catalogue's fences (decision 0023): recordings catalogued before the migration get their
 * datasets' fences, so every filter still finds them, and the words are under a trigram index (pg_trgm is
 * loaded by the embedded database and available on the PostgreSQL server the tests use).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Migrator, sql } from 'kysely';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { listRecordingRows } from '../../src/recordings/catalogue-queries.js';
import { usingPostgres } from '../support/test-server.js';

const FENCES = '2026-11-27-1800-recording-fences';

describe('the recording fences migration', () => {
  let database: DatabaseHandle;
  let drop: () => Promise<void> = async () => {};

  before(async () => {
    let url = 'pglite:memory';
    if (usingPostgres) {
      // An empty database of its own (the test template is migrated already).
      const admin = new URL(process.env.TEST_DATABASE_URL!);
      const name = `nds_mig_fences_${process.pid}_${Date.now()}`;
      const root = await connectDatabase(admin.toString());
      await sql.raw(`create database ${name}`).execute(root.db);
      await root.close();
      admin.pathname = `/${name}`;
      url = admin.toString();
      drop = async () => {
        const again = await connectDatabase(process.env.TEST_DATABASE_URL!);
        await sql.raw(`drop database if exists ${name} with (force)`).execute(again.db);
        await again.close();
      };
    }
    database = await connectDatabase(url);
    const before = Object.keys(migrations).filter((name) => name < FENCES).at(-1)!;
    const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
    const { error } = await migrator.migrateTo(before);
    assert.equal(error, undefined);
  });
  after(async () => {
    await database?.close();
    await drop();
  });

  it('fences the recordings already catalogued, so every filter finds them after the upgrade', async () => {
    const { db } = database;
    await sql`insert into users (username, email, status) values ('old-owner', 'old@example.org', 'approved')`.execute(db);
    const owner = (await sql<{ id: number }>`select id from users where username = 'old-owner'`.execute(db)).rows[0]!.id;
    await sql`insert into datasets (id, name, owner_id, visibility) values ('nd000001', 'old', ${owner}, 'public'), ('nd000002', 'empty', ${owner}, 'public')`.execute(db);
    for (const [zarr, subject, labels, rate, channels, duration] of [
      ['sub-01/eeg/a.zarr', '01', ['Cz', 'Pz'], 256, 2, 10],
      ['sub-02/eeg/b.zarr', '02', ['Cz', 'Oz', 'EMG1'], 1000, 3, 30],
    ] as const) {
      await sql`
        insert into recordings (dataset_id, zarr, path, subject, task, datatype, duration_s, n_channels, rates, channel_labels,
          channel_types, trial_types, groups, events, search_text, updated_at)
        values ('nd000001', ${zarr}, ${zarr.replace('.zarr', '.edf')}, ${subject}, 'rest', 'eeg', ${duration}, ${channels}, ${[rate]},
          ${labels as unknown as string[]}, ${['EEG']}, ${['left']}, '[]', '{"n_events":0,"counts":{}}',
          ${`nd000001 ${zarr} rest ${labels.join(' ')} EEG left`}, now())`.execute(db);
    }
    await migrateToLatest(db);

    const facets = (await sql<{ kind: string; value: string | null; num: number | null }>`
      select kind, value, num from recording_facets where dataset_id = 'nd000001' order by kind, value, num`.execute(db)).rows;
    const of = (kind: string) => facets.filter((f) => f.kind === kind).map((f) => f.value ?? f.num);
    assert.deepEqual(of('subject'), ['01', '02']);
    assert.deepEqual(of('channel'), ['Cz', 'EMG1', 'Oz', 'Pz']);
    assert.deepEqual(of('rate'), [256, 1000]);
    assert.deepEqual(of('n_channels'), [2, 3]);
    assert.deepEqual(of('duration'), [10, 30]);
    assert.deepEqual(of('event_type'), ['left']);
    const words = (await sql<{ words: string }>`select words from recording_words where dataset_id = 'nd000001'`.execute(db)).rows[0]!.words.split(' ');
    assert.ok(['nd000001', 'sub-02/eeg/b.zarr', 'EMG1', 'rest'].every((w) => words.includes(w)), words.join(' '));
    assert.equal((await sql`select 1 from recording_facets where dataset_id = 'nd000002'`.execute(db)).rows.length, 0);
    // Migration 2026-11-27-2319-recording-terms: the same text split at white space, /, _, . and -, each term once.
    const terms = (await sql<{ terms: string }>`select terms from recording_terms where dataset_id = 'nd000001'`.execute(db)).rows[0]!.terms.split(' ');
    assert.deepEqual([...terms].sort(), ['Cz', 'EEG', 'EMG1', 'Oz', 'Pz', 'a', 'b', 'eeg', 'left', 'nd000001', 'rest', 'sub', 'zarr', '01', '02'].sort());

    const found = async (filters: Parameters<typeof listRecordingRows>[2]) =>
      (await listRecordingRows(db, undefined, filters, { limit: 10 })).map((r) => r.zarr);
    assert.deepEqual(await found({ channel: ['Oz'] }), ['sub-02/eeg/b.zarr']);
    assert.deepEqual(await found({ rate: 256 }), ['sub-01/eeg/a.zarr']);
    assert.deepEqual(await found({ duration_min: 20 }), ['sub-02/eeg/b.zarr']);
    assert.deepEqual(await found({ q: 'EMG' }), ['sub-02/eeg/b.zarr']);
    assert.deepEqual(await found({ q: 'sub-02/eeg' }), ['sub-02/eeg/b.zarr']);
    assert.deepEqual(await found({ q: 'eeg/a.zarr rest' }), ['sub-01/eeg/a.zarr']);
    assert.deepEqual(await found({ subject: '01', channel_type: 'eeg' }), ['sub-01/eeg/a.zarr']);

    const index = await sql`select 1 from pg_indexes where indexname = 'recording_words_trigrams'`.execute(db);
    assert.equal(index.rows.length, 1, 'the words are under a trigram index');
    const termsIndex = await sql`select 1 from pg_indexes where indexname = 'recording_terms_trigrams'`.execute(db);
    assert.equal(termsIndex.rows.length, 1, 'the terms are under a trigram index');
  });
});
