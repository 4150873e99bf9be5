/**
 * A maintainer removed while their annotation commit into the dataset's hosted repository is under way: the
 * commit asks their right when its turn comes, and the version of the commit asks it again under the dataset's
 * row lock. A removal landing between the two refuses the commit and leaves the repository as it was: `main`
 * never holds a commit whose version was refused, by someone no longer allowed.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { InsertQueryNode, SelectAllNode, SelectQueryNode, TableNode, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { commitAnnotations } from '../../src/annotations/annotation-commit.js';
import { isNdsError } from '../../src/core/errors.js';
import { removeMember } from '../../src/datasets/dataset-members.js';
import { mainHead } from '../../src/datasets/hosted-repository.js';
import { listVersions } from '../../src/datasets/versions.js';
import { repositoryDir } from '../../src/git/repository-dir.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { json } from '../datasets/support.js';
import { gitIn, makeBidsRepo } from '../conversion/support.js';
import { pushAndConvert } from './support.js';

const send = (method: string, body?: unknown): RequestInit => ({ method, ...(body !== undefined && { body: JSON.stringify(body) }) });

/** `select version from dataset_versions where …`: whether a version number is taken, asked before the version's row lock. */
function asksWhetherVersionIsTaken(node: RootOperationNode): boolean {
  if (!SelectQueryNode.is(node)) return false;
  const from = node.from?.froms[0];
  const selections = node.selections ?? [];
  return !!from && TableNode.is(from) && from.table.identifier.name === 'dataset_versions' && selections.length === 1 && !SelectAllNode.is(selections[0]!.selection);
}

describe('a maintainer removed while their annotation commit into the hosted repository is made', () => {
  let server: TestServer;
  let owner: TestAccount;
  let repo: string;
  const id = 'nd000431';
  const eeg = 'sub-02/eeg/sub-02_task-rest_eeg.edf';

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    repo = makeBidsRepo();
    await insertDatasetRows(server.deps.db, { id, name: 'Hosted, maintainer leaving', owner_id: owner.user.id, visibility: 'private' });
    await pushAndConvert(server, repo, id, owner.key);
  });
  after(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  /** A new maintainer of the dataset, with an annotation of theirs to commit. */
  async function maintainerWithAnnotation(label: string): Promise<TestAccount> {
    const maintainer = await createAccount(server);
    assert.equal((await owner.api(`/datasets/${id}/members/${maintainer.user.username}`, send('PUT', { role: 'maintainer' }))).status, 201);
    await json(await maintainer.api(`/datasets/${id}/annotations`, send('POST', { path: eeg, onset: 0.5, duration: 0.25, label })), 201);
    return maintainer;
  }

  it('leaves main where it was when the removal lands after the commit was checked and before its version', async () => {
    const maintainer = await maintainerWithAnnotation('spike');
    const dir = repositoryDir(server.deps.config.gitDir, id);
    const headBefore = await mainHead(dir);
    const tagsBefore = gitIn(dir, 'tag', '--list');
    const versionsBefore = (await listVersions(server.deps.db, id)).map((v) => v.version);

    // The owner removes the maintainer once the commit has passed its check at its turn: after it asks whether
    // its version number is taken (the step before the version's row lock), at its next look at the object
    // store. (Not at the statement itself: its connection is held until the plugin returns, and PGlite has one.)
    let armed = false;
    let removed = false;
    const marker: KyselyPlugin = {
      transformQuery: (args) => {
        if (asksWhetherVersionIsTaken(args.node)) armed = true;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const objects = new Proxy(server.deps.objects, {
      get(target, prop) {
        if (prop === 'head') {
          return async (key: string) => {
            if (armed && !removed) {
              removed = true;
              await removeMember(server.deps, { user: owner.user, ip: '192.0.2.2' }, id, maintainer.user.username);
            }
            return target.head(key);
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const deps = { ...server.deps, db: server.deps.db.withPlugin(marker), objects };

    const outcome = await commitAnnotations(deps, maintainer.user, id, 'Spikes').then(
      (made) => `committed ${made.commit} as version ${made.version}`,
      (err: unknown) => err,
    );
    assert.ok(removed, 'the removal ran during the commit');
    assert.ok(isNdsError(outcome, 'dataset_not_found'), `the commit is refused to the maintainer removed meanwhile: ${String(outcome)}`);
    assert.equal(await mainHead(dir), headBefore, 'main holds no commit of the removed maintainer');
    assert.equal(gitIn(dir, 'tag', '--list'), tagsBefore, 'nor does a tag');
    assert.deepEqual((await listVersions(server.deps.db, id)).map((v) => v.version), versionsBefore);
  });

  it('makes the commit, its version and main whole when the removal comes while the version is recorded', async () => {
    const maintainer = await maintainerWithAnnotation('late spike');
    // The owner's removal is sent as the version's row is written, under the row lock the removal waits for.
    let removal: Promise<void> | undefined;
    const plugin: KyselyPlugin = {
      transformQuery: (args) => {
        const node = args.node;
        if (!removal && InsertQueryNode.is(node) && node.into?.table.identifier.name === 'dataset_versions') {
          removal = removeMember(server.deps, { user: owner.user, ip: '192.0.2.2' }, id, maintainer.user.username);
        }
        return node;
      },
      transformResult: async (args) => args.result,
    };
    const made = await commitAnnotations({ ...server.deps, db: server.deps.db.withPlugin(plugin) }, maintainer.user, id, 'Late spikes');
    assert.ok(removal, 'the removal was sent during the commit');
    await removal;
    const dir = repositoryDir(server.deps.config.gitDir, id);
    assert.equal(await mainHead(dir), made.commit);
    assert.equal(gitIn(dir, 'rev-parse', `v${made.version}^{commit}`), made.commit);
    assert.ok((await listVersions(server.deps.db, id)).some((v) => v.version === made.version && v.source_commit === made.commit));
    const member = await server.deps.db.selectFrom('dataset_members').select('role').where('dataset_id', '=', id).where('user_id', '=', maintainer.user.id).executeTakeFirst();
    assert.equal(member, undefined, 'the removal was made, after the commit');
    await server.worker!.idle();
  });
});
