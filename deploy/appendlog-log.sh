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

# The log tool (appendlog-log-tool, as flink-statebackend-appendlog's bin/appendlog-log.sh runs it) with the
# configuration and classpath of the cluster started by deploy/flink.sh, so that it reads hbase:// checkpoints
# and hdfs:// logs as the cluster does, e.g.
#   deploy/appendlog-log.sh inspect hbase://flink_checkpoints/<job-id>/chk-7/_metadata
#   deploy/appendlog-log.sh verify --json hdfs://<namenode>/flink/appendlog/<job-id>
# Exit codes: 0 no problem, 1 problems found, 2 usage error, 3 tool failure (see --help).
set -euo pipefail
source "$(dirname "$0")/common.sh"

[[ -n $APPENDLOG_LOG_TOOL_JAR ]] || die "no appendlog-log-tool jar in $WORK_DIR/dist/appendlog-*/lib: install the distribution with deploy/install.sh"
APPENDLOG_PLUGIN_JARS=$APPENDLOG_LOG_TOOL_JAR:$APPENDLOG_PLUGIN_JARS
exec_cli appendlog-log org.appendlog.logtool.LogToolCommand "$@"
