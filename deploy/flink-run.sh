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

# bin/flink of the cluster started by deploy/flink.sh: Flink's CliFrontend with FLINK_CONF_DIR set to its
# configuration, e.g.  deploy/flink-run.sh run -d -c org.example.Job job.jar
#                      deploy/flink-run.sh run -d -s hbase://flink_checkpoints/<job-id>/<run>/chk-7 job.jar
#                      deploy/flink-run.sh cancel <job-id>      deploy/flink-run.sh list
set -euo pipefail
source "$(dirname "$0")/common.sh"

exec_cli flink-client org.apache.flink.client.cli.CliFrontend "$@"
