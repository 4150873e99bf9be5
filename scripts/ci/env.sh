# Environment for the test suite, sourced by .ci/run after setup.sh.
# The S3 object-store tests run against the radosgw of scripts/ci/services/radosgw.sh (keys fixed there).
export TEST_S3_URL="${TEST_S3_URL:-s3://nds-test?endpoint=http://127.0.0.1:17480&region=us-east-1&access_key=NDSTESTACCESSKEY0001&secret_key=ndsTestSecretKey0000000000000000000000001}"
# Semantic search on the PostgreSQL server must rank with pgvector when setup.sh installed it.
if ls /usr/share/postgresql/*/extension/vector.control >/dev/null 2>&1; then export TEST_PGVECTOR=required; fi
