/**
 * The systemd units of docs/deploy.md, as the page prints them, checked by `systemd-analyze verify`: their
 * sections and directives are valid and their executables exist. The page's paths are this machine's for the
 * check (the checkout for /opt/nds, this Node.js for /usr/bin/node, the page's environment files written to a
 * temporary folder for /etc/nds). Nothing is started: the machine has no systemd as PID 1.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const page = readFileSync(path.join(repo, 'docs/deploy.md'), 'utf8');
const verifier = spawnSync('systemd-analyze', ['--version']).status === 0;

/** Each ```ini block of the page, named by the last `/etc/systemd/system/<name>` written before it. */
function unitsOf(markdown: string): Map<string, string> {
  const units = new Map<string, string>();
  for (const m of markdown.matchAll(/^```ini\n([\s\S]*?)^```$/gm)) {
    const before = markdown.slice(0, m.index);
    const names = [...before.matchAll(/`\/etc\/systemd\/system\/([\w@.-]+\.service)`/g)];
    const name = names.at(-1)?.[1];
    assert.ok(name, `an ini block with no unit named before it: ${m[1]!.slice(0, 60)}`);
    units.set(name, m[1]!);
  }
  return units;
}

describe('the systemd units of docs/deploy.md', { skip: verifier ? false : 'systemd-analyze is not installed (Debian: the systemd package)' }, () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nds-units-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('name an API node, a worker template and a gateway, each valid to systemd-analyze verify', () => {
    const units = unitsOf(page);
    assert.deepEqual([...units.keys()].sort(), ['nds-gateway.service', 'nds-serve.service', 'nds-worker@.service']);
    const env = /^`\/etc\/nds\/nds\.env`[\s\S]*?```sh\n([\s\S]*?)^```$/m.exec(page)?.[1];
    assert.ok(env, 'the page prints /etc/nds/nds.env');
    writeFileSync(path.join(dir, 'nds.env'), env);
    writeFileSync(path.join(dir, 'gateway.env'), 'PORT=8081\n');
    const paths: string[] = [];
    for (const [name, text] of units) {
      const local = text.replaceAll('/opt/nds', repo).replaceAll('/usr/bin/node', process.execPath).replaceAll('/etc/nds/', `${dir}/`);
      writeFileSync(path.join(dir, name), local);
      // A template is verified through an instance of it.
      paths.push(path.join(dir, name.replace('@.service', '@1.service')));
    }
    const verified = spawnSync('systemd-analyze', ['verify', '--man=no', ...paths], { encoding: 'utf8', env: { ...process.env, SYSTEMD_LOG_LEVEL: 'warning' } });
    assert.equal(verified.status, 0, verified.stderr);
    assert.equal(verified.stderr.trim(), '', verified.stderr);
  });
});
