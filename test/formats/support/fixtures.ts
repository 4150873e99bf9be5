/** The real recordings and BIDS trees the tests read (`test/fixtures/`, sources and licences in its SOURCES.md). */
import { fileURLToPath } from 'node:url';

export const fixturesDir = fileURLToPath(new URL('../../fixtures', import.meta.url));
