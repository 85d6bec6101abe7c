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

package org.appendlog.statebackend.compaction;

import org.appendlog.statebackend.index.CompactedBatches;
import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.index.RecordsToCopy;
import org.appendlog.statebackend.index.SegmentStats;
import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.CorruptLogException;
import org.appendlog.statebackend.log.KeyGroupRecords;
import org.appendlog.statebackend.log.LogScanner;
import org.appendlog.statebackend.log.LogScanner.Batch;
import org.appendlog.statebackend.log.RecordCursor;
import org.appendlog.statebackend.log.RecordFormat;
import org.appendlog.statebackend.log.SegmentedLog;

import org.apache.flink.runtime.state.KeyGroupRange;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One pass of the log cleaner: it rewrites the live records of the dirtiest segments into a
 * compacted run, which the snapshot strategy may take up so that its next checkpoint refers to
 * the run instead of the replaced batches. {@link Compactor} runs the passes on its own thread.
 *
 * <p>Liveness comes from the index, so nothing is scanned to find it: the index lists where each
 * live entry's latest record is (segment, batch, position), and a pass copies the records it lists
 * in the compacted segments, reading only the batches that hold one; the cost follows the live
 * records, not the dead. A tombstone is copied while its entry is not live and a batch the
 * checkpoint keeps may hold an older record of it; tombstones are looked for only in segments in
 * which the index saw one. Records keep their checkpoint ids, so restore's "latest wins" holds with
 * runs in any order.
 */
final class CompactionPass {

    /** Upper bound of one pass's input, so that a pass stays short and its run moderate. */
    private static final long MAX_INPUT_BYTES = 256L << 20;

    private final CompactionSettings settings;
    private final CompactionPolicy policy;
    private final SegmentedLog log;
    private final LogIndex index;
    private final KeyGroupRange owned;

    CompactionPass(
            CompactionSettings settings, SegmentedLog log, LogIndex index, KeyGroupRange owned) {
        this.settings = settings;
        this.policy =
                new CompactionPolicy(
                        settings.minDirtyRatio(),
                        settings.minLag(),
                        MAX_INPUT_BYTES,
                        log.sealsEveryBatch() ? settings.maxSegments() : Integer.MAX_VALUE);
        this.log = log;
        this.index = index;
        this.owned = owned;
    }

    /**
     * Compacts the dirtiest closed segments that {@code input} refers to, as the policy selects
     * them, into a run written to the log; null if the policy selects none.
     */
    @Nullable
    Outcome run(CompactionInput input) throws Exception {
        index.awaitUpdates();
        Set<String> referenced = BatchLocation.segmentsOf(input.batches);
        String active = log.activeSegment();
        List<SegmentStats> closed = new ArrayList<>();
        for (String segment : referenced) {
            SegmentStats stats = index.stats(segment);
            if (stats != null && !segment.equals(active)) {
                closed.add(stats);
            }
        }
        List<SegmentStats> chosen = policy.select(closed, System.currentTimeMillis());
        if (chosen.isEmpty()) {
            return null;
        }
        Set<String> compactedNames = new HashSet<>();
        chosen.forEach(s -> compactedNames.add(s.segment()));
        Map<String, BatchLocation> replaced = new LinkedHashMap<>();
        List<BatchLocation> kept = new ArrayList<>();
        for (BatchLocation batch : input.batches) {
            if (compactedNames.contains(batch.segment())) {
                replaced.put(batch.key(), batch);
            } else {
                kept.add(batch);
            }
        }
        List<BatchLocation> toRead = new ArrayList<>();
        for (BatchLocation batch : replaced.values()) {
            if (batch.keyGroups().getIntersection(owned).getNumberOfKeyGroups() > 0) {
                toRead.add(batch);
            }
        }
        CompactedBatches pass = index.compactedBatches(toRead);
        List<Source> sources = new ArrayList<>();
        for (Batch batch : LogScanner.openBatches(toRead, log::handle)) {
            sources.add(new Source(batch, sources.size(), input.stateIds));
        }
        IoThrottle throttle = new IoThrottle(settings.ioRateLimit());
        long runCheckpoint =
                replaced.values().stream().mapToLong(BatchLocation::checkpointId).max().orElse(0);
        List<Slice> slices =
                LogScanner.forEachSlice(
                        owned,
                        settings.threads(),
                        "appendlog-compactor " + owned,
                        slice ->
                                compactSlice(
                                        slice,
                                        pass,
                                        sources,
                                        kept,
                                        input,
                                        throttle,
                                        runCheckpoint));

        BatchBuilder run = new BatchBuilder(runCheckpoint, owned, input.stateNames);
        List<RecordsToCopy> copied = new ArrayList<>();
        boolean tombstones = false;
        long read = 0;
        for (Slice slice : slices) {
            run.takeAll(slice.records);
            copied.add(slice.live);
            tombstones |= slice.tombstones;
            read += slice.bytesRead;
        }
        BatchLocation location = null;
        if (run.recordCount() > 0) {
            location = log.writeRun(run);
            throttle.acquire(location.length());
            // Before the offer, so that the offer sees every checkpoint that completed meanwhile.
            index.moved(copied, pass, location, tombstones);
        }
        return new Outcome(
                new CompactionResult(replaced.keySet(), location), compactedNames.size(), read);
    }

    /** What a pass did: its result, how many segments it compacted and the bytes it read. */
    static final class Outcome {
        final CompactionResult result;
        final int segments;
        final long bytesRead;

        Outcome(CompactionResult result, int segments, long bytesRead) {
            this.result = result;
            this.segments = segments;
            this.bytesRead = bytesRead;
        }

        long bytesWritten() {
            return result.run() == null ? 0 : result.run().length();
        }
    }

    /** What one key-group slice contributes to the run. */
    private static final class Slice {
        final BatchBuilder records;
        /** The live records the index listed, each copied into {@link #records}. */
        final RecordsToCopy live = new RecordsToCopy();
        boolean tombstones;
        long bytesRead;

        Slice(BatchBuilder records) {
            this.records = records;
        }
    }

    /** A batch the pass replaces, under its number in the pass ({@link CompactedBatches}). */
    private static final class Source {
        final Batch batch;
        final int number;
        /** Per state id of the batch, the state's id in this backend; -1 if it has none. */
        final int[] stateIds;

        Source(Batch batch, int number, Map<String, Integer> ids) {
            this.batch = batch;
            this.number = number;
            List<String> names = batch.index.stateNames;
            this.stateIds = new int[names.size()];
            for (int i = 0; i < stateIds.length; i++) {
                stateIds[i] = ids.getOrDefault(names.get(i), -1);
            }
        }

        /** The backend's id of the state of the record under {@code cursor}. */
        int state(RecordCursor cursor) throws IOException {
            int id = cursor.stateId();
            String name = batch.stateName(cursor);
            if (stateIds[id] < 0) {
                throw new IOException("State '" + name + "' in " + batch.file() + " is unknown");
            }
            return stateIds[id];
        }
    }

    /**
     * Copies into the run the live records that the index lists in the slice's key groups, and
     * the tombstones that must stay. Only batches that hold a listed record, or may hold a
     * tombstone, are read: in a log of mostly dead segments, most are not.
     */
    private Slice compactSlice(
            KeyGroupRange slice,
            CompactedBatches pass,
            List<Source> sources,
            List<BatchLocation> kept,
            CompactionInput input,
            IoThrottle throttle,
            long runCheckpoint)
            throws Exception {
        Slice result = new Slice(new BatchBuilder(runCheckpoint, owned, input.stateNames));
        RecordsToCopy live = result.live;
        index.collectLive(slice, pass, live);
        boolean[] needed = new boolean[sources.size()];
        for (int i = 0; i < live.size(); i++) {
            needed[live.batch(i)] = true;
        }
        List<Batch> toRead = new ArrayList<>();
        Map<Batch, Source> sourceOf = new IdentityHashMap<>();
        for (Source source : sources) {
            if (needed[source.number] || pass.mayHoldTombstones(source.number)) {
                toRead.add(source.batch);
                sourceOf.put(source.batch, source);
            }
        }
        int firstKg = slice.getStartKeyGroup();
        KeyGroupRecords[][] records =
                new KeyGroupRecords[slice.getNumberOfKeyGroups()][sources.size()];
        result.bytesRead =
                LogScanner.read(
                        toRead,
                        slice,
                        throttle::acquire,
                        (batch, kg, read) ->
                                records[kg - firstKg][sourceOf.get(batch).number] = read);
        RecordCursor cursor = new RecordCursor();
        LatestRecords tombstones = new LatestRecords();
        int next = 0;
        for (int kg = firstKg; kg <= slice.getEndKeyGroup(); kg++) {
            KeyGroupRecords[] byBatch = records[kg - firstKg];
            for (; next < live.size() && live.keyGroup(next) == kg; next++) {
                Source source = sources.get(live.batch(next));
                listedRecord(cursor, byBatch[source.number], source, kg, live, next);
                live.setCopyPosition(next, result.records.nextPosition(kg));
                copy(result.records, kg, source.state(cursor), cursor);
            }
            // Of each entry's tombstones here, the latest is copied unless the entry is live (its
            // latest record, wherever it is, outranks every tombstone of it) or no batch the
            // checkpoint keeps may hold an older record of it. A value here that outranks the
            // copy was itself outranked by a tombstone elsewhere, so the copy hides nothing.
            tombstones.clear();
            for (Source source : sources) {
                KeyGroupRecords in = byBatch[source.number];
                if (in == null || !pass.mayHoldTombstones(source.number)) {
                    continue;
                }
                cursor.reset(in);
                while (cursor.next()) {
                    if (cursor.isTombstone()) {
                        tombstones.offer(
                                source.state(cursor),
                                cursor.bytes(),
                                cursor.keyOffset(),
                                cursor.keyLength(),
                                cursor.checkpointId(),
                                ((long) source.number << 32) | cursor.offset());
                    }
                }
            }
            for (int entry = 0; entry < tombstones.size(); entry++) {
                long position = tombstones.position(entry);
                cursor.reset(byBatch[(int) (position >>> 32)], (int) position).next();
                int state = tombstones.state(entry);
                if (!index.isLive(
                                kg, state, cursor.bytes(), cursor.keyOffset(), cursor.keyLength())
                        && olderRecordMayRemain(kept, kg, cursor.checkpointId())) {
                    copy(result.records, kg, state, cursor);
                    result.tombstones = true;
                }
            }
        }
        return result;
    }

    /**
     * Positions {@code cursor} on the listed record {@code i} of {@code live} in {@code records},
     * checking that a value record of the listed length starts there.
     */
    private static void listedRecord(
            RecordCursor cursor,
            KeyGroupRecords records,
            Source source,
            int kg,
            RecordsToCopy live,
            int i)
            throws IOException {
        if (records == null) {
            throw new IOException(
                    "The index places a live record of key group "
                            + kg
                            + " in "
                            + source.batch.location()
                            + ", which holds no record of that key group");
        }
        cursor.reset(records, records.offset + live.position(i));
        if (!cursor.next() || cursor.isTombstone() || cursor.encodedLength() != live.length(i)) {
            throw new CorruptLogException(
                    records.file(),
                    records.positionOf(records.offset + live.position(i)),
                    "the index places a live record of "
                            + live.length(i)
                            + " bytes of key group "
                            + kg
                            + " here, but none starts there");
        }
    }

    /** Adds the record under {@code cursor}, of state {@code state}, to {@code run}. */
    private static void copy(BatchBuilder run, int kg, int state, RecordCursor cursor)
            throws IOException {
        boolean tombstone = cursor.isTombstone();
        RecordFormat.write(
                run,
                kg,
                cursor.checkpointId(),
                state,
                cursor.bytes(),
                cursor.keyOffset(),
                cursor.keyLength(),
                tombstone ? null : cursor.bytes(),
                cursor.valueOffset(),
                tombstone ? 0 : cursor.valueLength());
    }

    /** Whether a batch that stays may hold a record of key group {@code kg} older than {@code id}. */
    private static boolean olderRecordMayRemain(List<BatchLocation> kept, int kg, long id) {
        for (BatchLocation batch : kept) {
            if (batch.keyGroups().contains(kg) && batch.minCheckpointId() < id) {
                return true;
            }
        }
        return false;
    }
}
