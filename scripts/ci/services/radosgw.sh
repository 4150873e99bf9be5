#!/usr/bin/env bash
# A real S3-compatible server for the tests: Ceph's radosgw from Debian, single node, memstore, on
# 127.0.0.1:17480, with a test user (fixed keys below, also in scripts/ci/env.sh) and the bucket `nds-test`.
# It checks SigV4 signatures, so presigned-URL tampering tests mean something. Idempotent: when the
# gateway already answers and stores a small object, it exits at once; a gateway that answers but cannot store
# (its memory store full, say, after a benchmark) is started afresh. Recipe: shared/reference/STACK.md ("Real S3 (radosgw)").
# RADOSGW_MEMSTORE_BYTES sizes the store (default 4 GiB: it is memory, used only as far as it is filled).
# RADOSGW_OBJECTSTORE=bluestore keeps the objects on disk instead, in a sparse file of RADOSGW_BLUESTORE_BYTES
# (default 24 GiB; it grows as it is written and does not shrink) under RADOSGW_DIR: for files larger than memory (the opt-in 6 GiB upload test). A second
# cluster beside the first needs its own RADOSGW_DIR, RADOSGW_PORT and RADOSGW_MON_PORT.
#
# Every port is below Linux's ephemeral range (32768-60999): a fixed port inside it is taken, now and then, by
# one of the suite's own outgoing connections, and a monitor that cannot bind it fails the whole start (a CI
# run lost its second cluster that way on port 43310).
set -euo pipefail

DIR="${RADOSGW_DIR:-/tmp/nds-radosgw}"
PORT="${RADOSGW_PORT:-17480}"
MON_PORT="${RADOSGW_MON_PORT:-13300}"
MON_V1_PORT=$((MON_PORT + 3489))
OBJECTSTORE="${RADOSGW_OBJECTSTORE:-memstore}"
ENDPOINT="http://127.0.0.1:$PORT"
ACCESS_KEY="NDSTESTACCESSKEY0001"
SECRET_KEY="ndsTestSecretKey0000000000000000000000001"
BUCKET="nds-test"

gateway_up() { curl -s -o /dev/null --max-time 2 "$ENDPOINT/"; }

# A signed PUT of `$1` (a path under the endpoint) with the body `$2`; prints the status code (000: no answer).
signed_put() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X PUT --data-binary "${2:-}" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
    --aws-sigv4 "aws:amz:us-east-1:s3" --user "$ACCESS_KEY:$SECRET_KEY" "$ENDPOINT/$1" || true
}

ensure_bucket() {
  # 200 (created) or 409 (already ours) are both fine.
  local code
  code=$(signed_put "$BUCKET")
  [[ "$code" == 200 || "$code" == 409 ]] || { echo "radosgw: bucket creation answered $code" >&2; return 1; }
}

# A write, not only an answer: a full memstore answers reads and lets writes hang.
stores_objects() { [[ "$(signed_put "$BUCKET/.radosgw-probe" probe)" == 200 ]]; }

if gateway_up && ensure_bucket 2>/dev/null && stores_objects; then
  exit 0
fi

if ! command -v radosgw >/dev/null || ! command -v ceph-mon >/dev/null || ! command -v ceph-osd >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ceph-mon ceph-osd radosgw >/dev/null
fi

# A previous cluster whose gateway is down or cannot store: stop what is left of it and start afresh (memstore
# keeps nothing). Its daemons are found by the configuration file on their command line, never by pid files:
# after a restart of the machine (the folders outlive it) a stale pid file names whatever process has that pid
# now, the other cluster's gateway as likely as anything.
stop_cluster() { pkill -f -- "-c $DIR/ceph.conf" 2>/dev/null || true; }
if pgrep -f -- "-c $DIR/ceph.conf" >/dev/null; then
  stop_cluster
  for _ in $(seq 1 20); do pgrep -f -- "-c $DIR/ceph.conf" >/dev/null || break; sleep 0.5; done
  pkill -9 -f -- "-c $DIR/ceph.conf" 2>/dev/null || true
fi
rm -rf "$DIR"
mkdir -p "$DIR/run" "$DIR/log" "$DIR/mon.a" "$DIR/osd.0"

FSID=$(cat /proc/sys/kernel/random/uuid)
cat >"$DIR/ceph.conf" <<EOF
[global]
fsid = $FSID
mon host = [v2:127.0.0.1:$MON_PORT,v1:127.0.0.1:$MON_V1_PORT]
mon initial members = a
public addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
osd objectstore = $OBJECTSTORE
memstore device bytes = ${RADOSGW_MEMSTORE_BYTES:-4294967296}
bluestore block create = true
bluestore block size = ${RADOSGW_BLUESTORE_BYTES:-25769803776}
bluestore fsck on mkfs = false
# BlueStore sizes its caches to this target: the default (4 GiB) is more than a test machine should give it.
osd memory target = 1073741824
mon data = $DIR/\$name
osd data = $DIR/\$name
run dir = $DIR/run
log file = $DIR/log/\$name.log
admin socket = $DIR/run/\$name.asok
pid file = $DIR/run/\$name.pid
keyring = $DIR/keyring

[osd]
keyring = $DIR/\$name/keyring

[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$PORT
rgw data = $DIR/rgw
# Deleted objects' data is freed by the gateway's garbage collector, by default two hours later: in a memory
# store that the tests and benchmarks fill and empty, that is a full store within the hour.
rgw gc obj min wait = 5
rgw gc processor period = 10
EOF
export CEPH_CONF="$DIR/ceph.conf"

ceph-authtool --create-keyring "$DIR/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "$DIR/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
ceph-authtool "$DIR/keyring" --gen-key -n client.rgw --cap mon 'allow rw' --cap osd 'allow rwx' >/dev/null
monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT,v1:127.0.0.1:$MON_V1_PORT]" "$DIR/monmap" >/dev/null

# Each daemon names its configuration on its command line (stop_cluster finds them by it).
ceph-mon -c "$DIR/ceph.conf" --mkfs -i a --monmap "$DIR/monmap" --keyring "$DIR/keyring" </dev/null >/dev/null 2>&1
ceph-mon -c "$DIR/ceph.conf" -i a </dev/null >/dev/null 2>&1

OSD_ID=$(timeout 60 ceph osd create) || {
  echo "radosgw: the monitor of $DIR does not answer; the end of its log:" >&2
  tail -n 5 "$DIR/log/mon.a.log" >&2 || true
  exit 1
}
timeout 30 ceph auth get-or-create "osd.$OSD_ID" osd 'allow *' mon 'allow profile osd' -o "$DIR/osd.$OSD_ID/keyring" >/dev/null
ceph-osd -c "$DIR/ceph.conf" -i "$OSD_ID" --mkfs </dev/null >/dev/null 2>&1
ceph-osd -c "$DIR/ceph.conf" -i "$OSD_ID" </dev/null >/dev/null 2>&1

mkdir -p "$DIR/rgw"
radosgw -n client.rgw -c "$DIR/ceph.conf" </dev/null >/dev/null 2>&1

for _ in $(seq 1 120); do gateway_up && break; sleep 0.5; done
gateway_up || { echo "radosgw did not come up; see $DIR/log" >&2; exit 1; }

# The user: creating it twice with the same keys is refused, so look first.
if ! radosgw-admin user info --uid=nds-test >/dev/null 2>&1; then
  radosgw-admin user create --uid=nds-test --display-name="nds tests" \
    --access-key="$ACCESS_KEY" --secret-key="$SECRET_KEY" >/dev/null
fi
for _ in $(seq 1 20); do ensure_bucket 2>/dev/null && break; sleep 0.5; done
ensure_bucket
echo "radosgw: $ENDPOINT, bucket $BUCKET"
