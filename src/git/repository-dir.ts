import path from 'node:path';

/** The bare repository folder of a dataset under `GIT_DIR_ROOT`. */
export function repositoryDir(gitDir: string, datasetId: string): string {
  return path.join(gitDir, `${datasetId}.git`);
}
