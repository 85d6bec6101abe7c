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

package org.appendlog.statebackend.log;

import org.appendlog.statebackend.log.BatchFormat.BatchIndex;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.util.IOUtils;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Reads batches key group by key group, for restore and for compaction: verifies each batch's
 * header and footer, then reads a contiguous slice of key groups from every batch in one
 * sequential read per batch, checking each key group's CRC. Slices can be scanned in parallel.
 * Compaction and restore walk the records where they were read ({@link #read}).
 */
public final class LogScanner {

    private LogScanner() {}

    /** A batch to read: its segment's handle and its verified header and footer. */
    public static final class Batch {
        public final StreamStateHandle segment;
        public final BatchIndex index;
        private final String file;
        /** The key groups to read: the batch's, or fewer. */
        private final KeyGroupRange readable;

        Batch(StreamStateHandle segment, BatchIndex index) {
            this(segment, index, index.location.keyGroups());
        }

        private Batch(StreamStateHandle segment, BatchIndex index, KeyGroupRange readable) {
            this.segment = segment;
            this.index = index;
            this.file = describe(segment);
            this.readable = readable;
        }

        public BatchLocation location() {
            return index.location;
        }

        /** This batch, read only for the key groups of {@code range}. */
        public Batch restrictedTo(KeyGroupRange range) {
            return new Batch(segment, index, readable.getIntersection(range));
        }

        public String file() {
            return file;
        }

        /** The name of the state of the record under {@code record}, a record of this batch. */
        public String stateName(RecordCursor record) throws CorruptLogException {
            int stateId = record.stateId();
            List<String> names = index.stateNames;
            if (stateId >= names.size()) {
                throw new CorruptLogException(
                        file(), record.position(), "record refers to unknown state id " + stateId);
            }
            return names.get(stateId);
        }
    }

    /** Called before each read with its size; may wait (compaction's rate limit). */
    @FunctionalInterface
    public interface ReadGate {
        ReadGate NONE = bytes -> {};

        void beforeRead(long bytes) throws InterruptedException;
    }

    /** A name for a segment handle in error messages: its path where it has one. */
    public static String describe(StreamStateHandle handle) {
        return handle instanceof FileStateHandle
                ? ((FileStateHandle) handle).getFilePath().toString()
                : handle.toString();
    }

    /** Opens each batch's segment and verifies its header and footer. */
    public static List<Batch> openBatches(
            Collection<BatchLocation> locations, Function<String, StreamStateHandle> segments)
            throws IOException {
        List<Batch> batches = new ArrayList<>();
        Map<String, FSDataInputStream> open = new HashMap<>();
        try {
            for (BatchLocation location : locations) {
                StreamStateHandle handle = segments.apply(location.segment());
                if (handle == null) {
                    throw new IOException(
                            "Checkpoint lists batch "
                                    + location
                                    + " but holds no handle for segment "
                                    + location.segment());
                }
                FSDataInputStream in = open.get(location.segment());
                if (in == null) {
                    in = openSegment(handle);
                    open.put(location.segment(), in);
                }
                batches.add(
                        new Batch(handle, BatchFormat.readIndex(in, describe(handle), location)));
            }
        } finally {
            open.values().forEach(IOUtils::closeQuietly);
        }
        return batches;
    }

    private static FSDataInputStream openSegment(StreamStateHandle handle) throws IOException {
        try {
            return handle.openInputStream();
        } catch (FileNotFoundException e) {
            throw new IOException(
                    "State log segment " + describe(handle) + " of the checkpoint is missing", e);
        } catch (IOException e) {
            if (handle instanceof FileStateHandle
                    && LeaseRecovery.isNeeded(e)
                    && LeaseRecovery.recover(((FileStateHandle) handle).getFilePath())) {
                return handle.openInputStream();
            }
            throw e;
        }
    }

    /** Receives the verified records of one key group of one batch, still encoded. */
    @FunctionalInterface
    public interface KeyGroupReader {
        void accept(Batch batch, int keyGroup, KeyGroupRecords records) throws IOException;
    }

    /**
     * Reads the key groups of {@code slice} from every batch, in the order of {@code batches}, and
     * hands each non-empty key group's verified bytes to {@code reader}. Returns the bytes read.
     */
    public static long read(
            List<Batch> batches, KeyGroupRange slice, ReadGate gate, KeyGroupReader reader)
            throws IOException, InterruptedException {
        long bytesRead = 0;
        Map<StreamStateHandle, FSDataInputStream> open = new HashMap<>();
        try {
            for (Batch batch : batches) {
                KeyGroupRange part = batch.readable.getIntersection(slice);
                if (part.getNumberOfKeyGroups() == 0) {
                    continue;
                }
                long size = 0;
                for (int kg = part.getStartKeyGroup(); kg <= part.getEndKeyGroup(); kg++) {
                    size += batch.index.keyGroupLength(kg);
                }
                gate.beforeRead(size);
                FSDataInputStream in = open.get(batch.segment);
                if (in == null) {
                    in = openSegment(batch.segment);
                    open.put(batch.segment, in);
                }
                BatchFormat.readKeyGroups(
                        in,
                        batch.file(),
                        batch.index,
                        part.getStartKeyGroup(),
                        part.getEndKeyGroup(),
                        (kg, records) -> reader.accept(batch, kg, records));
                bytesRead += size;
            }
        } finally {
            open.values().forEach(IOUtils::closeQuietly);
        }
        return bytesRead;
    }

    /** Splits {@code range} into at most {@code n} contiguous, non-empty slices. */
    public static List<KeyGroupRange> slices(KeyGroupRange range, int n) {
        int groups = range.getNumberOfKeyGroups();
        int count = Math.max(1, Math.min(n, groups));
        List<KeyGroupRange> slices = new ArrayList<>(count);
        int start = range.getStartKeyGroup();
        for (int i = 0; i < count; i++) {
            int size = groups / count + (i < groups % count ? 1 : 0);
            slices.add(KeyGroupRange.of(start, start + size - 1));
            start += size;
        }
        return slices;
    }

    /** Work on one slice of key groups. */
    @FunctionalInterface
    public interface SliceTask<T> {
        T run(KeyGroupRange slice) throws Exception;
    }

    /**
     * Slices per thread: a slice's records are held in memory while it is worked on, so smaller
     * slices bound that memory to a fraction of the input.
     */
    private static final int SLICES_PER_THREAD = 8;

    /**
     * Runs {@code task} on each slice of {@code range}, {@code threads} at a time, on threads named
     * {@code threadName}; returns the results in key-group order. With one thread, the slices run
     * one after another on the calling thread.
     */
    public static <T> List<T> forEachSlice(
            KeyGroupRange range, int threads, String threadName, SliceTask<T> task)
            throws Exception {
        List<KeyGroupRange> slices = slices(range, threads * SLICES_PER_THREAD);
        if (threads == 1) {
            List<T> results = new ArrayList<>();
            for (KeyGroupRange slice : slices) {
                results.add(task.run(slice));
            }
            return results;
        }
        AtomicInteger started = new AtomicInteger();
        ExecutorService pool =
                Executors.newFixedThreadPool(
                        Math.min(threads, slices.size()),
                        r -> {
                            Thread t =
                                    new Thread(r, threadName + " #" + started.incrementAndGet());
                            t.setDaemon(true);
                            return t;
                        });
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (KeyGroupRange slice : slices) {
                futures.add(pool.submit(() -> task.run(slice)));
            }
            List<T> results = new ArrayList<>();
            for (Future<T> future : futures) {
                try {
                    results.add(future.get());
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    throw cause instanceof Exception ? (Exception) cause : e;
                }
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }
}
