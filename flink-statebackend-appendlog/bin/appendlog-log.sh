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

# appendlog-log verify|inspect [--json] [--conf-dir DIR] <segment | directory | _metadata>  (--help for more)
# Runs on a Flink installation: the classpath is $FLINK_HOME/lib/* (which holds flink-statebackend-appendlog,
# and for hbase:// checkpoints flink-hbase-checkpoint's flink-lib jar) plus the tool jar, found in the lib/
# next to this bin/ (a binary distribution), in appendlog-log-tool/target (a source tree) or as
# APPENDLOG_LOG_TOOL_JAR. For hdfs:// paths put Hadoop on HADOOP_CLASSPATH as for Flink itself
# (export HADOOP_CLASSPATH=$(hadoop classpath)). File systems are configured from --conf-dir, else
# FLINK_CONF_DIR (default $FLINK_HOME/conf), with the plugins in FLINK_PLUGINS_DIR (default
# $FLINK_HOME/plugins), as on the cluster. JVM_ARGS are passed to the JVM.
set -euo pipefail
: "${FLINK_HOME:?set FLINK_HOME to the Flink installation}"
bin=$(cd "$(dirname "$0")" && pwd)
tool_jar=${APPENDLOG_LOG_TOOL_JAR:-$(ls "$bin"/../lib/appendlog-log-tool-*.jar \
  "$bin"/../../appendlog-log-tool/target/appendlog-log-tool-*[0-9T].jar 2>/dev/null | head -n 1 || true)}
if [[ ! -f $tool_jar ]]; then
  echo "appendlog-log: no appendlog-log-tool jar in $bin/../lib or the source tree; set APPENDLOG_LOG_TOOL_JAR" >&2
  exit 3
fi
export FLINK_CONF_DIR="${FLINK_CONF_DIR:-$FLINK_HOME/conf}"
export FLINK_PLUGINS_DIR="${FLINK_PLUGINS_DIR:-$FLINK_HOME/plugins}"
# Flink's client logging: to a file, so that stdout holds only the tool's output.
logging=()
if [[ -f $FLINK_CONF_DIR/log4j-cli.properties ]]; then
  logging=(-Dlog4j.configurationFile="file:$FLINK_CONF_DIR/log4j-cli.properties"
           -Dlog.file="${FLINK_LOG_DIR:-$FLINK_HOME/log}/appendlog-log.log")
fi
# shellcheck disable=SC2086
exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" ${JVM_ARGS:-} "${logging[@]}" \
  -cp "$tool_jar:$FLINK_HOME/lib/*${HADOOP_CLASSPATH:+:$HADOOP_CLASSPATH}" \
  org.appendlog.logtool.LogToolCommand "$@"
