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

# A one-machine HDFS on loopback: a NameNode (formatted on first start) and a DataNode, each its own JVM.
# Usage: deploy/hdfs.sh start|stop
set -euo pipefail
source "$(dirname "$0")/common.sh"

CONF=$WORK_DIR/hdfs/conf

write_conf() {
  mkdir -p "$CONF" "$WORK_DIR/hdfs/name" "$WORK_DIR/hdfs/data"
  xml_site "$CONF/core-site.xml" "fs.defaultFS=$HDFS_URI"
  xml_site "$CONF/hdfs-site.xml" \
    "dfs.namenode.name.dir=file://$WORK_DIR/hdfs/name" \
    "dfs.datanode.data.dir=file://$WORK_DIR/hdfs/data" \
    "dfs.namenode.rpc-address=$BIND_HOST:$NAMENODE_PORT" \
    "dfs.namenode.http-address=$BIND_HOST:$NAMENODE_HTTP_PORT" \
    "dfs.datanode.address=$BIND_HOST:$DATANODE_PORT" \
    "dfs.datanode.http.address=$BIND_HOST:$DATANODE_HTTP_PORT" \
    "dfs.datanode.ipc.address=$BIND_HOST:$DATANODE_IPC_PORT" \
    "dfs.datanode.hostname=$BIND_HOST" \
    "dfs.replication=1" \
    "dfs.permissions.enabled=false" \
    "dfs.namenode.datanode.registration.ip-hostname-check=false" \
    "dfs.namenode.safemode.min.datanodes=1"
  cat >"$CONF/log4j.properties" <<LOG
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p %c{2}: %m%n
LOG
}

hdfs_java() { echo "-Xmx512m -cp $CONF:$(classpath hdfs)"; }

# The DataNode has registered when the NameNode reports it live (and safe mode, which waits for one
# DataNode, is off).
datanode_live() {
  $JAVA $JAVA_OPENS $(hdfs_java) org.apache.hadoop.hdfs.tools.DFSAdmin -report 2>/dev/null | grep -q 'Live datanodes (1)'
}

case ${1:-} in
  start)
    write_conf
    if [[ ! -d $WORK_DIR/hdfs/name/current ]]; then
      log "formatting the NameNode in $WORK_DIR/hdfs/name"
      $JAVA $JAVA_OPENS $(hdfs_java) org.apache.hadoop.hdfs.server.namenode.NameNode -format -nonInteractive \
        >"$WORK_DIR/logs/namenode-format.out" 2>&1 || die "format failed, see $WORK_DIR/logs/namenode-format.out"
    fi
    start_java namenode $(hdfs_java) org.apache.hadoop.hdfs.server.namenode.NameNode
    start_java datanode $(hdfs_java) org.apache.hadoop.hdfs.server.datanode.DataNode
    wait_for 120 "NameNode port $NAMENODE_PORT" namenode port_open "$NAMENODE_PORT"
    wait_for 120 "a live DataNode" datanode datanode_live
    log "HDFS is up at $HDFS_URI"
    ;;
  stop)
    stop_process datanode
    stop_process namenode
    ;;
  *) die "usage: $0 start|stop" ;;
esac
