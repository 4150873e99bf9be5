/**
 * Which objects an S3 store's anonymous public base serves (decision 0016): those tagged `nds-access=public`,
 * under the bucket policy below, which operators apply to the bucket. nds tags the objects of public datasets'
 * Zarr copies and nothing else; an untagged object (every upload, every private copy) is not public.
 */

/** The object tag that opens an object to anonymous reads. */
export const PUBLIC_READ_TAG = { key: 'nds-access', value: 'public' } as const;
/** The tag's value on an object taken back from the public. */
export const PRIVATE_READ_VALUE = 'private';

/** The bucket policy that lets anyone read the objects nds tagged public, and nothing else. */
export function publicReadPolicy(bucket: string): { Version: string; Statement: unknown[] } {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'NdsPublicCopies',
        Effect: 'Allow',
        Principal: '*',
        Action: ['s3:GetObject'],
        Resource: [`arn:aws:s3:::${bucket}/*`],
        Condition: { StringEquals: { [`s3:ExistingObjectTag/${PUBLIC_READ_TAG.key}`]: PUBLIC_READ_TAG.value } },
      },
    ],
  };
}
