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

# Paired rounds of the 2 M-key word count, an old and a new build of this repository: each pair
# runs the `bench` harness (hashmap and appendlog) once in a JVM of each build, the order flipped
# from pair to pair, so that both see the same stretch of a shared machine's noise. Then
# tools/paired-rounds.py prints the median new/old ratio of each figure with its 95 % bootstrap
# interval. Each tree must be compiled first, in it:
#   ./mvnw -B -q -pl flink-statebackend-appendlog,flink-hbase-checkpoint,benchmark-jobs compile \
#       dependency:build-classpath -Dmdep.outputFile=target/classpath
# Usage: tools/paired-rounds.sh OLD_TREE NEW_TREE OUT_DIR [PAIRS (default 6)] [bench options...]
set -euo pipefail
old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
mkdir -p "$3"
out=$(cd "$3" && pwd)
pairs=${4:-6}
shift $(($# < 4 ? $# : 4))

run() { # TREE LABEL PAIR [bench options...]
  local tree=$1 label=$2 pair=$3
  shift 3
  java -XX:+UseParallelGC -Xms3g -Xmx3g \
    -cp "$tree/benchmark-jobs/target/classes:$(cat "$tree/benchmark-jobs/target/classpath")" \
    org.appendlog.bench.Bench --quick --jobs wordcount --backends hashmap,appendlog --storages local \
    --vocabulary 2000000 --run-seconds 6 --inject-failure false --limits false \
    --checkpoint-interval-ms 1000 "$@" --out "$out/pair$pair-$label" > "$out/pair$pair-$label.log" 2>&1
}
for ((p = 1; p <= pairs; p++)); do
  if ((p % 2)); then
    run "$old" old "$p" "$@"; run "$new" new "$p" "$@"
  else
    run "$new" new "$p" "$@"; run "$old" old "$p" "$@"
  fi
done
python3 "$(dirname "$0")/paired-rounds.py" "$out"
