/**
 * The release of nds this code is: the package version, named in every log line and in the refusal of a
 * database schema this code cannot read (`db/migrate.ts`). `test/core/release.test.ts` holds it equal to
 * package.json's `version` (the CLI runs from a bundle, where package.json is not beside the code).
 */
export const NDS_VERSION = '0.1.0';
