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

# A standalone Flink 1.20 session cluster on loopback, as bin/jobmanager.sh and bin/taskmanager.sh start it:
# the "lib" classpath is Flink's jars, the plugin jars that deploy/install.sh put into <work>/flink/lib and
# the Hadoop client classpath (as HADOOP_CLASSPATH would add it); conf/flink-conf.yaml selects the appendlog
# state backend (log on HDFS) and the HBase checkpoint storage.
# Usage: deploy/flink.sh start|stop|start-jobmanager
#        deploy/flink.sh start-taskmanager|stop-taskmanager|kill-taskmanager [N]
# TaskManagers are numbered (N, default 1): a replacement for a killed one gets a new number.
# kill-taskmanager sends SIGKILL (kill -9), as a crash would.
set -euo pipefail
source "$(dirname "$0")/common.sh"

CONF=$WORK_DIR/flink/conf
TM_ID=${2:-1}
TASK_SLOTS=${TASK_SLOTS:-2}
CHECKPOINT_INTERVAL=${CHECKPOINT_INTERVAL:-2s}

write_conf() {
  mkdir -p "$CONF" "$WORK_DIR/flink/tmp"
  cat >"$CONF/flink-conf.yaml" <<YAML
# Written by deploy/flink.sh.
jobmanager.rpc.address: $BIND_HOST
jobmanager.rpc.port: $JOBMANAGER_RPC_PORT
jobmanager.bind-host: $BIND_HOST
jobmanager.memory.process.size: 1024m
rest.address: $BIND_HOST
rest.bind-address: $BIND_HOST
rest.port: $REST_PORT
taskmanager.host: $BIND_HOST
taskmanager.bind-host: $BIND_HOST
taskmanager.numberOfTaskSlots: $TASK_SLOTS
taskmanager.memory.process.size: 1280m
parallelism.default: $TASK_SLOTS
io.tmp.dirs: $WORK_DIR/flink/tmp
env.java.opts.all: $JAVA_OPENS

# The project's state backend, its log on HDFS.
state.backend.type: org.appendlog.statebackend.AppendLogStateBackendFactory
state.backend.appendlog.dir: $HDFS_URI/flink/appendlog

# The project's checkpoint storage in the standalone HBase (execution.checkpointing.storage is Flink 1.20's
# name of state.checkpoint-storage); savepoints are files on HDFS.
execution.checkpointing.storage: org.appendlog.hbase.HBaseCheckpointStorageFactory
execution.checkpointing.hbase.zookeeper.quorum: $BIND_HOST:$ZOOKEEPER_PORT
execution.checkpointing.hbase.table: flink_checkpoints
execution.checkpointing.savepoint-dir: $HDFS_URI/flink/savepoints

execution.checkpointing.interval: $CHECKPOINT_INTERVAL
execution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 1000
restart-strategy.fixed-delay.delay: 2 s

# A killed TaskManager is noticed within seconds, not the default 50.
heartbeat.interval: 2000
heartbeat.timeout: 10000
YAML
  cat >"$CONF/log4j.properties" <<LOG
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = MainAppender
appender.main.name = MainAppender
appender.main.type = File
appender.main.append = true
appender.main.fileName = \${sys:log.file}
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = WARN
logger.zookeeper.name = org.appendlog.hbase.shaded.org.apache.zookeeper
logger.zookeeper.level = WARN
LOG
  cp "$CONF/log4j.properties" "$CONF/log4j-cli.properties"
}

[[ -n $APPENDLOG_PLUGIN_JARS ]] || die "no plugin jars in $FLINK_LIB: install the distribution with deploy/install.sh"

# What bin/config.sh puts together: lib/ (Flink and the plugins), then HADOOP_CLASSPATH.
FLINK_CLASSPATH=$(classpath flink):${APPENDLOG_PLUGIN_JARS%:}:$(classpath hadoop)

# resource_params COMMAND: the JVM options and the -D dynamic properties that Flink's BashJavaUtils computes
# from the configuration (the last two lines of its output), as bin/taskmanager.sh and bin/jobmanager.sh use.
resource_params() {
  local out
  out=$($JAVA $JAVA_OPENS -cp "$FLINK_CLASSPATH" org.apache.flink.runtime.util.bash.BashJavaUtils "$1" --configDir "$CONF" 2>&1) \
    || die "BashJavaUtils $1 failed: $out"
  echo "$out" | grep '^BASH_JAVA_UTILS_EXEC_RESULT:' | tail -n 2 | sed 's/^BASH_JAVA_UTILS_EXEC_RESULT://'
}

start_jobmanager() {
  local params jvm dynamic
  params=$(resource_params GET_JM_RESOURCE_PARAMS)
  jvm=$(sed -n 1p <<<"$params"); dynamic=$(sed -n 2p <<<"$params")
  start_java jobmanager $jvm -Dlog.file="$WORK_DIR/logs/jobmanager.log" \
    -Dlog4j.configurationFile="file:$CONF/log4j.properties" -cp "$FLINK_CLASSPATH" \
    org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint --configDir "$CONF" $dynamic
  wait_for 120 "the REST endpoint on port $REST_PORT" jobmanager \
    grep -q "Rest endpoint listening at" "$WORK_DIR/logs/jobmanager.log"
}

start_taskmanager() {
  local params jvm dynamic name=taskmanager-$TM_ID
  params=$(resource_params GET_TM_RESOURCE_PARAMS)
  jvm=$(sed -n 1p <<<"$params"); dynamic=$(sed -n 2p <<<"$params")
  start_java "$name" $jvm -Dlog.file="$WORK_DIR/logs/$name.log" \
    -Dlog4j.configurationFile="file:$CONF/log4j.properties" -cp "$FLINK_CLASSPATH" \
    org.apache.flink.runtime.taskexecutor.TaskManagerRunner --configDir "$CONF" $dynamic
  wait_for 120 "registration of $name at the JobManager" "$name" \
    grep -q "Successful registration at resource manager" "$WORK_DIR/logs/$name.log"
}

case ${1:-} in
  start)
    write_conf
    start_jobmanager
    start_taskmanager
    log "Flink is up, web UI and REST at http://$BIND_HOST:$REST_PORT, conf $CONF"
    ;;
  start-jobmanager) write_conf; start_jobmanager ;;
  start-taskmanager) start_taskmanager ;;
  stop-taskmanager) stop_process "taskmanager-$TM_ID" ;;
  kill-taskmanager) stop_process "taskmanager-$TM_ID" KILL ;;
  stop)
    for f in "$WORK_DIR"/pids/taskmanager-*.pid; do
      [[ -e $f ]] && stop_process "$(basename "$f" .pid)"
    done
    stop_process jobmanager
    ;;
  *) die "usage: $0 start|stop|start-jobmanager|start-taskmanager [N]|stop-taskmanager [N]|kill-taskmanager [N]" ;;
esac
