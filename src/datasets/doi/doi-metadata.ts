/** DataCite metadata (schema 4, JSON:API attributes) of a dataset or one of its versions. */
import type { Dataset } from '../dataset-queries.js';

export interface DoiAttributes {
  titles: Array<{ title: string }>;
  creators: Array<{ name: string; nameType: 'Personal' | 'Organizational' }>;
  publisher: string;
  publicationYear: number;
  types: { resourceTypeGeneral: 'Dataset'; resourceType: string };
  url: string;
  descriptions: Array<{ description: string; descriptionType: 'Abstract' }>;
  rightsList: Array<{ rights: string }>;
  subjects: Array<{ subject: string }>;
  version?: string;
  relatedIdentifiers?: Array<{ relatedIdentifier: string; relatedIdentifierType: 'DOI'; relationType: 'IsVersionOf' | 'HasVersion' }>;
}

export interface DoiTarget {
  /** Landing page of the dataset (or of the version). */
  url: string;
  publisher: string;
  year: number;
  version?: string;
  /** The concept DOI a version DOI belongs to. */
  conceptDoi?: string;
}

export function doiAttributes(d: Pick<Dataset, 'name' | 'description' | 'authors' | 'license' | 'keywords'>, target: DoiTarget): DoiAttributes {
  return {
    titles: [{ title: d.name }],
    creators: d.authors.map((name) => ({ name, nameType: 'Personal' as const })),
    publisher: target.publisher,
    publicationYear: target.year,
    types: { resourceTypeGeneral: 'Dataset', resourceType: 'BIDS dataset' },
    url: target.url,
    descriptions: d.description.trim() ? [{ description: d.description, descriptionType: 'Abstract' as const }] : [],
    rightsList: d.license ? [{ rights: d.license }] : [],
    subjects: d.keywords.map((subject) => ({ subject })),
    ...(target.version !== undefined && { version: target.version }),
    ...(target.conceptDoi !== undefined && {
      relatedIdentifiers: [{ relatedIdentifier: target.conceptDoi, relatedIdentifierType: 'DOI' as const, relationType: 'IsVersionOf' as const }],
    }),
  };
}

/** What a dataset lacks before it can be published; empty when complete. */
export function missingMetadata(d: Pick<Dataset, 'name' | 'description' | 'authors' | 'license'>): string[] {
  const missing: string[] = [];
  if (!d.name.trim()) missing.push('title: the dataset needs a name');
  if (d.authors.filter((a) => a.trim()).length === 0) missing.push('authors: list at least one author');
  if (!d.license?.trim()) missing.push('license: set a license, such as CC0-1.0 or CC-BY-4.0');
  if (!d.description.trim()) missing.push('description: describe the dataset in a few sentences');
  return missing;
}
