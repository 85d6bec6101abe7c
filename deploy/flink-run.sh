#!/usr/bin/env bash
# bin/flink of the cluster started by deploy/flink.sh: Flink's CliFrontend with FLINK_CONF_DIR set to its
# configuration, e.g.  deploy/flink-run.sh run -d -c org.example.Job job.jar
#                      deploy/flink-run.sh run -d -s hbase://flink_checkpoints/<job-id>/<run>/chk-7 job.jar
#                      deploy/flink-run.sh cancel <job-id>      deploy/flink-run.sh list
set -euo pipefail
source "$(dirname "$0")/common.sh"

exec_cli flink-client org.apache.flink.client.cli.CliFrontend "$@"
