#!/usr/bin/env bash
# The state log tool: appendlog-log.sh verify|inspect <segment | directory | _metadata>
# Runs on a Flink installation whose lib/ holds flink-statebackend-appendlog; for hdfs:// paths
# put Hadoop on HADOOP_CLASSPATH as for Flink itself (export HADOOP_CLASSPATH=$(hadoop classpath)).
set -euo pipefail
: "${FLINK_HOME:?set FLINK_HOME to the Flink installation}"
exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" \
  -cp "$FLINK_HOME/lib/*${HADOOP_CLASSPATH:+:$HADOOP_CLASSPATH}" \
  org.appendlog.statebackend.tool.LogTool "$@"
