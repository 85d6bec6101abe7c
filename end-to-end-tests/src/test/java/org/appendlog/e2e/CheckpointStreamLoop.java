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

package org.appendlog.e2e;

import org.appendlog.hbase.HBaseCheckpointStorageFactory;
import org.appendlog.hbase.HBaseCheckpointStorageOptions;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.StreamStateHandle;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.FutureTask;

/**
 * Writes, reads back and discards checkpoint streams through the HBase checkpoint storage, one after
 * another for a given time, as a TaskManager does: run in a JVM whose classpath is Flink's
 * distribution, the Hadoop client and the plugin's {@code -flink-lib} jar, so that the relocated
 * HBase client does the work. Each stream is larger than the inline threshold (it becomes rows);
 * read back it must equal what was written, and after its discard a read must find no row.
 *
 * <p>Given a second table, a plain HBase client of Flink's HBase SQL connector jar (the stand-in's
 * {@code PutGetLoop}, loaded by name: this JVM's classpath has the jar) puts rows and reads them back there
 * at the same time, in the same class loader.
 *
 * <p>Prints {@code ready} once the storage (and the connector's client) created their tables, a line for
 * every failed stream (and put) and then {@code streams <n> failed <m>} (and {@code connector puts <n>
 * failed <m>}); exits with status 1 if any failed.
 *
 * <p>Arguments: {@code <zookeeper quorum> <table> <seconds> [<table of the connector's client>]}.
 */
public final class CheckpointStreamLoop {

    private static final int STREAM_BYTES = 200 * 1024;
    private static final String CONNECTOR_CLIENT = "org.appendlog.e2e.standin.PutGetLoop";

    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        conf.set(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM, args[0]);
        conf.set(HBaseCheckpointStorageOptions.TABLE, args[1]);
        // One region: every stream meets every move of it.
        conf.set(HBaseCheckpointStorageOptions.SALT_BUCKETS, 1);
        long seconds = Long.parseLong(args[2]);

        CheckpointStorageAccess access =
                new HBaseCheckpointStorageFactory()
                        .createFromConfig(conf, CheckpointStreamLoop.class.getClassLoader())
                        .createCheckpointStorage(new JobID());
        access.initializeBaseLocationsForCheckpoint();
        FutureTask<String> connector = null;
        if (args.length > 3) {
            Object client =
                    Class.forName(CONNECTOR_CLIENT).getConstructor(String.class, String.class).newInstance(args[0], args[3]);
            Method run = client.getClass().getMethod("run", long.class);
            connector = new FutureTask<>(() -> (String) run.invoke(client, seconds));
            new Thread(connector, "connector-client").start();
        }
        System.out.println("ready");
        long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();

        byte[] data = new byte[STREAM_BYTES];
        new Random(42).nextBytes(data);
        long streams = 0;
        long failed = 0;
        while (System.nanoTime() < end) {
            streams++;
            try {
                writeReadDiscard(access.initializeLocationForCheckpoint(streams), data);
            } catch (Exception | LinkageError e) {
                // LinkageError: a class of another jar in the class loader, called with this jar's types.
                failed++;
                System.out.println("stream of checkpoint " + streams + " failed: " + e);
                e.printStackTrace(System.out);
            }
        }
        System.out.printf("streams %d failed %d%n", streams, failed);
        boolean connectorFailed = false;
        if (connector != null) {
            String summary = connector.get();
            System.out.println("connector " + summary);
            connectorFailed = !summary.endsWith(" failed 0");
        }
        System.exit(failed == 0 && !connectorFailed ? 0 : 1);
    }

    private static void writeReadDiscard(CheckpointStorageLocation location, byte[] data) throws Exception {
        StreamStateHandle handle;
        try (CheckpointStateOutputStream out =
                location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE)) {
            out.write(data);
            handle = out.closeAndGetHandle();
        }
        byte[] read;
        try (FSDataInputStream in = handle.openInputStream()) {
            read = in.readAllBytes();
        }
        if (!Arrays.equals(read, data)) {
            throw new IOException(
                    handle + " read back " + read.length + " bytes that differ from the " + data.length + " written");
        }
        handle.discardState();
        try {
            handle.openInputStream().close();
        } catch (FileNotFoundException expected) {
            return; // its rows are gone
        }
        throw new IOException(handle + " is still readable after its discard");
    }

    private CheckpointStreamLoop() {}
}
