import type { Config } from '../../core/config.js';
import { DataciteProvider } from './datacite-provider.js';
import { TestDoiProvider, type DoiProvider } from './doi-provider.js';

/** DataCite when `DATACITE_*` is configured, else the built-in test provider. */
export function openDoiProvider(config: Pick<Config, 'datacite'>): DoiProvider {
  return config.datacite ? new DataciteProvider(config.datacite) : new TestDoiProvider();
}
