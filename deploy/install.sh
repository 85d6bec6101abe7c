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

# Installs the plugins from the binary distribution as a user does: checks the archive against its .sha512,
# unpacks it under the work directory and copies its plugin jars (lib/flink-*.jar) into the lib/ of the Flink
# layout that deploy/flink.sh starts (replacing what an earlier install put there); deploy/appendlog-log.sh
# runs the log tool's jar from the unpacked lib/. Run it before deploy/flink.sh start.
# Usage: deploy/install.sh [appendlog-<version>-bin.tgz]   (default: the one in distribution/target, built by
#        ./mvnw -B package -DskipTests -pl distribution -am)
set -euo pipefail
source "$(dirname "$0")/common.sh"

archive=${1:-$(ls "$REPO_HOME"/distribution/target/appendlog-*-bin.tgz 2>/dev/null | head -n 1 || true)}
[[ -f $archive ]] || die "no distribution archive${1:+ $1}: build it with ./mvnw -B package -DskipTests -pl distribution -am"
if [[ -f $archive.sha512 ]]; then
  (cd "$(dirname "$archive")" && sha512sum --quiet -c "$(basename "$archive").sha512") \
    || die "$archive does not match its checksum $archive.sha512"
fi

rm -rf "$WORK_DIR/dist" "$FLINK_LIB"
mkdir -p "$WORK_DIR/dist" "$FLINK_LIB"
tar -xzf "$archive" -C "$WORK_DIR/dist"
dist=$(ls -d "$WORK_DIR"/dist/appendlog-*/)
cp "$dist"lib/flink-*.jar "$FLINK_LIB"/
log "installed $(ls "$FLINK_LIB" | tr '\n' ' ')into $FLINK_LIB from $archive"
