#!/usr/bin/env bash
# Everything on one machine, on loopback: HDFS, then HBase on it, then the Flink session cluster.
# Usage: deploy/cluster.sh start|stop      (stop also cleans up after a failed start)
set -euo pipefail
DIR=$(dirname "$0")
case ${1:-} in
  start)
    "$DIR"/hdfs.sh start
    "$DIR"/hbase.sh start
    "$DIR"/flink.sh start
    ;;
  stop)
    # Reverse order; every step runs even if an earlier one fails.
    "$DIR"/flink.sh stop || true
    "$DIR"/hbase.sh stop || true
    "$DIR"/hdfs.sh stop || true
    ;;
  *) echo "usage: $0 start|stop" >&2; exit 1 ;;
esac
