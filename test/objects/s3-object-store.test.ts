import { S3ObjectStore } from '../../src/objects/s3-object-store.js';
import { objectStoreContract } from './object-store.contract.js';

// A real S3 server that checks signatures (scripts/ci/services/radosgw.sh; TEST_S3_URL from scripts/ci/env.sh).
const url = process.env.TEST_S3_URL;
objectStoreContract(
  'S3 store (radosgw)',
  async () => {
    const store = S3ObjectStore.fromUrl(url!);
    return { store, close: () => store.close() };
  },
  { skip: url ? undefined : 'TEST_S3_URL is not set (run scripts/ci/services/radosgw.sh and source scripts/ci/env.sh)' },
);
