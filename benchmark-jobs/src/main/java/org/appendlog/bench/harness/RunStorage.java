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

package org.appendlog.bench.harness;

import org.apache.flink.configuration.Configuration;

import java.io.IOException;
import java.util.List;

/** One run's place on a checkpoint storage: how Flink is pointed at it, and what the run left there. */
interface RunStorage {

    /** Sets the checkpoint storage options in {@code conf}, as a user would in {@code flink-conf.yaml}. */
    void configureCheckpoints(Configuration conf);

    /**
     * A file system directory URI for the backends' own durable logs (the appendlog log, the
     * changelog DSTL), which are file-system logs whatever the checkpoint storage is.
     */
    String logDirectory();

    /** Everything the run stores: its checkpoints and its logs. */
    List<StoredEntries> contents();

    /** Megabytes (10^6 bytes) per second for writing {@code megabytes} sequentially, synced. */
    double writeBandwidth(int megabytes) throws IOException;

    /** Removes what the run stored; leftovers are removed with the work directory. */
    void delete();
}
