#!/usr/bin/env bash
# The state backend's log tool (flink-statebackend-appendlog's bin/appendlog-log.sh) with the configuration
# and classpath of the cluster started by deploy/flink.sh, so that it reads hbase:// checkpoints and hdfs://
# logs as the cluster does, e.g.  deploy/appendlog-log.sh inspect hbase://flink_checkpoints/<job-id>/chk-7/_metadata
#                                 deploy/appendlog-log.sh verify hdfs://<namenode>/flink/appendlog/<job-id>
set -euo pipefail
source "$(dirname "$0")/common.sh"

exec_cli appendlog-log org.appendlog.statebackend.tool.LogTool "$@"
