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

# A standalone HBase on loopback: one HMaster JVM that runs the master, a region server and its embedded
# ZooKeeper (hbase.cluster.distributed=false), with its root directory on the HDFS of deploy/hdfs.sh
# (HBASE_ROOTDIR_KIND=hdfs, the default) or in a local directory (HBASE_ROOTDIR_KIND=local).
# Usage: deploy/hbase.sh start|stop
set -euo pipefail
source "$(dirname "$0")/common.sh"

CONF=$WORK_DIR/hbase/conf

case $HBASE_ROOTDIR_KIND in
  hdfs) ROOTDIR=$HDFS_URI/hbase ;;
  local) ROOTDIR=file://$WORK_DIR/hbase/root ;;
  *) die "HBASE_ROOTDIR_KIND must be hdfs or local, not '$HBASE_ROOTDIR_KIND'" ;;
esac

write_conf() {
  mkdir -p "$CONF" "$WORK_DIR/hbase/zookeeper" "$WORK_DIR/hbase/tmp"
  xml_site "$CONF/hbase-site.xml" \
    "hbase.cluster.distributed=false" \
    "hbase.rootdir=$ROOTDIR" \
    "hbase.tmp.dir=$WORK_DIR/hbase/tmp" \
    "hbase.zookeeper.quorum=$BIND_HOST" \
    "hbase.zookeeper.property.clientPort=$ZOOKEEPER_PORT" \
    "hbase.zookeeper.property.dataDir=$WORK_DIR/hbase/zookeeper" \
    "hbase.master.hostname=$BIND_HOST" \
    "hbase.regionserver.hostname=$BIND_HOST" \
    "hbase.master.ipc.address=$BIND_HOST" \
    "hbase.regionserver.ipc.address=$BIND_HOST" \
    "hbase.master.port=$HBASE_MASTER_PORT" \
    "hbase.regionserver.port=$HBASE_REGIONSERVER_PORT" \
    "hbase.master.info.port=-1" \
    "hbase.regionserver.info.port=-1" \
    "hbase.unsafe.stream.capability.enforce=$([[ $HBASE_ROOTDIR_KIND == local ]] && echo false || echo true)"
  cat >"$CONF/log4j2.properties" <<LOG
rootLogger.level=INFO
rootLogger.appenderRef.console.ref=console
appender.console.type=Console
appender.console.name=console
appender.console.layout.type=PatternLayout
appender.console.layout.pattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n
LOG
}

case ${1:-} in
  start)
    write_conf
    start_java hbase-master -Xmx768m -Dlog4j2.configurationFile="$CONF/log4j2.properties" \
      -cp "$CONF:$(classpath hbase)" org.apache.hadoop.hbase.master.HMaster start
    wait_for 120 "ZooKeeper port $ZOOKEEPER_PORT" hbase-master port_open "$ZOOKEEPER_PORT"
    wait_for 180 "master initialization" hbase-master \
      grep -q "Master has completed initialization" "$WORK_DIR/logs/hbase-master.out"
    log "HBase is up, ZooKeeper quorum $BIND_HOST:$ZOOKEEPER_PORT, root $ROOTDIR"
    ;;
  stop)
    # As bin/stop-hbase.sh: ask the master to shut the cluster down (regions flushed, WAL closed); a
    # signal alone leaves the JVM hanging in Hadoop's shutdown hooks.
    if is_running hbase-master; then
      timeout 60 $JAVA $JAVA_OPENS -Xmx256m -Dlog4j2.configurationFile="$CONF/log4j2.properties" \
        -cp "$CONF:$(classpath hbase)" org.apache.hadoop.hbase.master.HMaster stop --shutDownCluster \
        >"$WORK_DIR/logs/hbase-stop.out" 2>&1 || log "HMaster stop failed, see $WORK_DIR/logs/hbase-stop.out"
    fi
    stop_process hbase-master
    ;;
  *) die "usage: $0 start|stop" ;;
esac
