#!/usr/bin/env bash
# `npm run bench -- upload-s3`: nds datasets upload against @aws-sdk/lib-storage's Upload into the same bucket
# of the radosgw that scripts/ci/services/radosgw.sh starts (TEST_S3_URL of scripts/ci/env.sh); goal ≥ 0.9×.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ci/env.sh
exec node --import tsx bench/upload.ts --files 1 --mib 256 --rounds 3 --s3 "$TEST_S3_URL" "$@"
