/**
 * The `Database` interface Kysely checks every query against. Each domain's tables are declared in
 * its own file here in `db/`; this file only joins them.
 */
import type { AccountsTables } from './accounts-tables.js';
import type { AnnotationsTables } from './annotations-tables.js';
import type { ConversionTables } from './conversion-tables.js';
import type { DatasetsTables } from './datasets-tables.js';
import type { PublicationTables } from './publication-tables.js';
import type { RateLimitTables } from './rate-limit-tables.js';
import type { RecordingsTables } from './recordings-tables.js';

export interface Database extends AccountsTables, DatasetsTables, ConversionTables, PublicationTables, RecordingsTables, RateLimitTables, AnnotationsTables {}
