import { objectStoreContract } from './object-store.contract.js';
import { startTestServer } from '../support/test-server.js';

// The folder store's presigned URLs are served by the nds server itself, so the suite runs against one.
objectStoreContract('folder store (through a running nds server)', async () => {
  const server = await startTestServer();
  return { store: server.deps.objects, close: () => server.close() };
});
