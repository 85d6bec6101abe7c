#!/usr/bin/env bash
# Copyright AppendLog contributors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

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
