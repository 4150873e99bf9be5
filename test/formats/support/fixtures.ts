/** The shared fixtures folder: `shared/fixtures` beside the repository (as CI lays it out), or NDS_FIXTURES. */
import { fileURLToPath } from 'node:url';

export const fixturesDir = process.env['NDS_FIXTURES'] ?? fileURLToPath(new URL('../../../../shared/fixtures', import.meta.url));
