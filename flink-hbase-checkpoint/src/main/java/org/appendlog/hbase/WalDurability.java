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

import org.apache.hadoop.hbase.client.Durability;

/** The write-ahead-log durabilities a user may choose for checkpoint writes. */
public enum WalDurability {
    SYNC_WAL(Durability.SYNC_WAL),
    FSYNC_WAL(Durability.FSYNC_WAL),
    ASYNC_WAL(Durability.ASYNC_WAL),
    SKIP_WAL(Durability.SKIP_WAL);

    private final Durability hbaseDurability;

    WalDurability(Durability hbaseDurability) {
        this.hbaseDurability = hbaseDurability;
    }

    Durability toHBase() {
        return hbaseDurability;
    }
}
