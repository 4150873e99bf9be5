/**
 * The whole surface, held in two snapshots: every route of `nds serve` (method, path, who may call it) and
 * the help of every `nds` command. A route or a command that appears, disappears or changes its access
 * shows up in review as a change of these files.
 */
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { Hono } from 'hono';
import { appRoutes } from '../../src/app.js';
import { buildProgram } from '../../src/cli/program.js';
import { routeTable } from '../../src/http/route.js';
import { matchSnapshot } from '../support/snapshot.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Every command, depth first, as `nds a b` and its help text. */
function helpOf(command: Command, prefix: string[] = []): string[] {
  const name = [...prefix, command.name()];
  const own = `$ ${name.join(' ')} --help\n${command.helpInformation()}`;
  return [own, ...command.commands.flatMap((sub) => helpOf(sub, name))];
}

describe('the surface of nds', () => {
  it('routes: every method, path and access rule of nds serve', () => {
    matchSnapshot(path.join(here, 'route-table.snapshot.txt'), `${routeTable(appRoutes(new Hono())).join('\n')}\n`);
  });

  it('commands: the help of every nds command group and command', () => {
    // Help text wraps at the terminal's width: fixed, so the snapshot does not depend on who runs it.
    const program = buildProgram();
    const fixed = (c: Command) => {
      c.configureOutput({ getOutHelpWidth: () => 100, getErrHelpWidth: () => 100 });
      c.commands.forEach(fixed);
    };
    fixed(program);
    matchSnapshot(path.join(here, 'cli-help.snapshot.txt'), helpOf(program).join('\n'));
  });
});
