/*
 * Copyright AppendLog contributors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package org.appendlog.hbase;

import org.apache.flink.runtime.security.token.hadoop.HadoopDelegationTokenReceiver;

/**
 * Adds the HBase delegation tokens of {@link HBaseCheckpointTokenProvider} to the current Hadoop
 * user of a Flink process, the user that the storage's connections authenticate as: HBase's
 * client prefers a token of the cluster over Kerberos, and picks the newest one (same alias) for
 * every RPC connection it opens afterwards.
 */
public final class HBaseCheckpointTokenReceiver extends HadoopDelegationTokenReceiver {

    @Override
    public String serviceName() {
        return HBaseCheckpointTokenProvider.SERVICE_NAME;
    }
}
