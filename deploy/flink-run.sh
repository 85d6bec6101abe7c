#!/usr/bin/env bash
# bin/flink of the cluster started by deploy/flink.sh: Flink's CliFrontend with FLINK_CONF_DIR set to its
# configuration, e.g.  deploy/flink-run.sh run -d -c org.example.Job job.jar
#                      deploy/flink-run.sh run -d -s hbase://flink_checkpoints/<job-id>/<run>/chk-7 job.jar
#                      deploy/flink-run.sh cancel <job-id>      deploy/flink-run.sh list
set -euo pipefail
source "$(dirname "$0")/common.sh"

CONF=$WORK_DIR/flink/conf
[[ -f $CONF/flink-conf.yaml ]] || die "no Flink configuration in $CONF: start the cluster with deploy/flink.sh start"

export FLINK_CONF_DIR=$CONF
exec $JAVA $JAVA_OPENS -Xmx256m -Dlog.file="$WORK_DIR/logs/flink-client.log" \
  -Dlog4j.configurationFile="file:$CONF/log4j-cli.properties" \
  -cp "$(classpath flink):${APPENDLOG_PLUGIN_JARS%:}:$(classpath hadoop)" \
  org.apache.flink.client.cli.CliFrontend "$@"
