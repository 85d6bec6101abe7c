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

# Sourced by the deploy/*.sh scripts: locations, ports, classpaths and process handling.
# Every setting below can be overridden from the environment (the end-to-end test picks free ports).

DEPLOY_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_HOME=$(dirname "$DEPLOY_HOME")

# All state of the local clusters: configuration, data, logs, pid files.
WORK_DIR=${APPENDLOG_DEPLOY_DIR:-$DEPLOY_HOME/work}

# Loopback only: every server binds to this address.
BIND_HOST=127.0.0.1

NAMENODE_PORT=${NAMENODE_PORT:-9820}
NAMENODE_HTTP_PORT=${NAMENODE_HTTP_PORT:-9870}
DATANODE_PORT=${DATANODE_PORT:-9866}
DATANODE_HTTP_PORT=${DATANODE_HTTP_PORT:-9864}
DATANODE_IPC_PORT=${DATANODE_IPC_PORT:-9867}
ZOOKEEPER_PORT=${ZOOKEEPER_PORT:-2181}
HBASE_MASTER_PORT=${HBASE_MASTER_PORT:-16000}
HBASE_REGIONSERVER_PORT=${HBASE_REGIONSERVER_PORT:-16020}
JOBMANAGER_RPC_PORT=${JOBMANAGER_RPC_PORT:-6123}
REST_PORT=${REST_PORT:-8081}

# hdfs (HBase on the HDFS above) or local (a directory under WORK_DIR).
HBASE_ROOTDIR_KIND=${HBASE_ROOTDIR_KIND:-hdfs}

HDFS_URI=hdfs://$BIND_HOST:$NAMENODE_PORT

# Flink's lib/ in the layout that deploy/flink.sh starts (Flink's own jars come from deploy/classpath/flink):
# deploy/install.sh copies the distribution's lib/flink-*.jar here, as a user copies them into flink/lib.
FLINK_LIB=$WORK_DIR/flink/lib
APPENDLOG_PLUGIN_JARS=$(ls "$FLINK_LIB"/*.jar 2>/dev/null | tr '\n' ':' || true)
# The log tool's jar (the command line and its relocated picocli) in the installed distribution, run by
# deploy/appendlog-log.sh.
APPENDLOG_LOG_TOOL_JAR=${APPENDLOG_LOG_TOOL_JAR:-$(ls "$WORK_DIR"/dist/appendlog-*/lib/appendlog-log-tool-*.jar 2>/dev/null | head -n 1 || true)}

# The JVMs run on Java 17: Flink, Hadoop and HBase reflect into these packages.
JAVA_OPENS="--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.math=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED --add-opens=java.base/jdk.internal.misc=ALL-UNNAMED --add-exports=java.base/sun.net.util=ALL-UNNAMED"

JAVA=${JAVA:-java}

mkdir -p "$WORK_DIR"/{pids,logs,classpath}

die() { echo "error: $*" >&2; exit 1; }
log() { echo "[$(date -u +%H:%M:%S)] $*"; }

# classpath NAME: the runtime classpath of deploy/classpath/NAME/pom.xml. All of them are resolved by one
# Maven run, kept in WORK_DIR/classpath. Maven first works offline from the local repository; if something
# is missing there, it runs again and downloads it from its configured repositories (MAVEN_OFFLINE=true:
# never download).
classpath() {
  local file=$WORK_DIR/classpath/$1.txt
  if [[ ! -s $file ]]; then
    resolve_classpaths -o || { [[ ${MAVEN_OFFLINE:-} != true ]] && log "not all in the local Maven repository, resolving online" >&2 && resolve_classpaths; } \
      || die "could not resolve the classpaths of deploy/classpath/pom.xml"
    [[ -s $file ]] || die "no classpath $1 in deploy/classpath"
  fi
  cat "$file"
}

resolve_classpaths() {
  "$REPO_HOME"/mvnw -B -q "$@" -f "$DEPLOY_HOME/classpath/pom.xml" dependency:build-classpath \
    -DincludeScope=runtime -Dclasspath.dir="$WORK_DIR/classpath" >"$WORK_DIR/logs/maven-classpath.out" 2>&1
}

pid_file() { echo "$WORK_DIR/pids/$1.pid"; }

is_running() {
  local f; f=$(pid_file "$1")
  [[ -f $f ]] && kill -0 "$(cat "$f")" 2>/dev/null
}

# start_java NAME JAVA_ARGS...: starts a detached JVM, its output in logs/NAME.out, its pid in pids/NAME.pid.
start_java() {
  local name=$1; shift
  is_running "$name" && die "$name is already running (pid $(cat "$(pid_file "$name")"))"
  nohup "$JAVA" $JAVA_OPENS "$@" >"$WORK_DIR/logs/$name.out" 2>&1 </dev/null &
  echo $! >"$(pid_file "$name")"
  log "started $name (pid $!), log $WORK_DIR/logs/$name.out"
}

# stop_process NAME [SIGNAL]: TERM (or the given signal), then KILL after 20 s; a no-op if not running.
stop_process() {
  local name=$1 signal=${2:-TERM} f pid
  f=$(pid_file "$name")
  [[ -f $f ]] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -"$signal" "$pid" 2>/dev/null
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    log "stopped $name (pid $pid, SIG$signal)"
  fi
  rm -f "$f"
}

# wait_for TIMEOUT_SECONDS DESCRIPTION PROCESS COMMAND...: polls the command until it succeeds; fails at
# once, with the end of its log, if the process started as PROCESS has exited meanwhile.
wait_for() {
  local timeout=$1 what=$2 process=$3; shift 3
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if ! is_running "$process"; then
      tail -n 30 "$WORK_DIR/logs/$process.out" >&2
      die "$process exited before $what was reached; its log: $WORK_DIR/logs/$process.out"
    fi
    ((SECONDS < deadline)) || die "$what not reached within ${timeout}s"
    sleep 1
  done
}

# exec_cli LOG MAIN_CLASS ARGS...: replaces this shell with a command-line client (Flink's, the log tool) that
# runs with the configuration and classpath of the cluster started by deploy/flink.sh, logging to logs/LOG.log.
exec_cli() {
  local log=$1 main=$2 conf=$WORK_DIR/flink/conf
  shift 2
  [[ -f $conf/flink-conf.yaml ]] || die "no Flink configuration in $conf: start the cluster with deploy/flink.sh start"
  export FLINK_CONF_DIR=$conf
  exec $JAVA $JAVA_OPENS -Xmx256m -Dlog.file="$WORK_DIR/logs/$log.log" \
    -Dlog4j.configurationFile="file:$conf/log4j-cli.properties" \
    -cp "$(classpath flink):${APPENDLOG_PLUGIN_JARS%:}:$(classpath hadoop)" \
    "$main" "$@"
}

port_open() { (exec 3<>"/dev/tcp/$BIND_HOST/$1") 2>/dev/null; }

# xml_site FILE NAME=VALUE...: writes a Hadoop-style *-site.xml.
xml_site() {
  local file=$1; shift
  {
    echo '<?xml version="1.0"?>'
    echo '<configuration>'
    local kv
    for kv in "$@"; do
      echo "  <property><name>${kv%%=*}</name><value>${kv#*=}</value></property>"
    done
    echo '</configuration>'
  } >"$file"
}
