#!/usr/bin/env bash
# The state log tool: appendlog-log.sh verify|inspect <segment | directory | _metadata>
# Runs on a Flink installation whose lib/ holds flink-statebackend-appendlog; for hdfs:// paths
# put Hadoop on HADOOP_CLASSPATH as for Flink itself (export HADOOP_CLASSPATH=$(hadoop classpath)).
# File systems are configured from $FLINK_CONF_DIR (default $FLINK_HOME/conf) and its plugins
# directory, as on the cluster: hbase:// checkpoints and s3:// logs are read as Flink reads them.
set -euo pipefail
: "${FLINK_HOME:?set FLINK_HOME to the Flink installation}"
export FLINK_CONF_DIR="${FLINK_CONF_DIR:-$FLINK_HOME/conf}"
export FLINK_PLUGINS_DIR="${FLINK_PLUGINS_DIR:-$FLINK_HOME/plugins}"
exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" \
  -cp "$FLINK_HOME/lib/*${HADOOP_CLASSPATH:+:$HADOOP_CLASSPATH}" \
  org.appendlog.statebackend.tool.LogTool "$@"
