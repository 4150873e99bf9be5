/** A sink that only counts what it is given (for tests that do not read the store back). */
import type { StoreSink } from '../../../src/formats/zarr/store-sink.js';

export class NullSink implements StoreSink {
  bytes = 0;
  keys = 0;
  async put(_key: string, bytes: Uint8Array): Promise<void> {
    this.bytes += bytes.length;
    this.keys++;
  }
}
