#!/usr/bin/env bash
# The state backend's log tool (flink-statebackend-appendlog's bin/appendlog-log.sh) with the configuration
# and classpath of the cluster started by deploy/flink.sh, so that it reads hbase:// checkpoints and hdfs://
# logs as the cluster does, e.g.  deploy/appendlog-log.sh inspect hbase://flink_checkpoints/<job-id>/chk-7/_metadata
#                                 deploy/appendlog-log.sh verify hdfs://<namenode>/flink/appendlog/<job-id>
set -euo pipefail
source "$(dirname "$0")/common.sh"

CONF=$WORK_DIR/flink/conf
[[ -f $CONF/flink-conf.yaml ]] || die "no Flink configuration in $CONF: start the cluster with deploy/flink.sh start"

export FLINK_CONF_DIR=$CONF
exec $JAVA $JAVA_OPENS -Xmx256m -Dlog.file="$WORK_DIR/logs/appendlog-log.log" \
  -Dlog4j.configurationFile="file:$CONF/log4j-cli.properties" \
  -cp "$(classpath flink):${APPENDLOG_PLUGIN_JARS%:}:$(classpath hadoop)" \
  org.appendlog.statebackend.tool.LogTool "$@"
