/** The AWS SDK's client for the bucket of an nds store URL, as the S3 benches' baselines use it. */
import { S3Client } from '@aws-sdk/client-s3';
import { parseS3Url } from '../src/objects/s3-object-store.js';

/**
 * A client of the store `s3Url` (`s3://bucket?endpoint=…`) that checksums only where S3 requires it: the
 * SDK's default CRC of every request would be work nds's presigned parts do not do.
 */
export function sdkClientFor(s3Url: string): S3Client {
  const location = parseS3Url(s3Url);
  return new S3Client({
    region: location.region,
    endpoint: location.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: location.accessKeyId!, secretAccessKey: location.secretAccessKey! },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}
