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

package org.appendlog.cec.source;

import org.appendlog.cec.api.CecRecordKind;
import org.appendlog.cec.log.LogRecord;

import org.apache.flink.connector.base.source.reader.RecordsBySplits;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsChange;

import java.io.IOException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads the assigned splits in batches on the fetcher thread. A bounded split finishes at its
 * committed end; following splits are read in turn, each refreshed from its commit markers at
 * most every {@link #POLL_MILLIS} ms, and when none has anything new the fetch waits that long
 * (or until woken up) instead of spinning.
 */
final class CecLogSplitReader implements SplitReader<PositionedRecord, CecLogSplit> {

    /** How often a following reader looks for new commits. */
    static final long POLL_MILLIS = 100;

    private static final int BATCH = 1024;

    private final Map<String, SubtaskStreamReader> streams = new LinkedHashMap<>();
    private final AtomicLong lagBytes;
    private final Object wakeUp = new Object();
    private boolean wokenUp;

    CecLogSplitReader(AtomicLong lagBytes) {
        this.lagBytes = lagBytes;
    }

    @Override
    public RecordsWithSplitIds<PositionedRecord> fetch() throws IOException {
        RecordsBySplits.Builder<PositionedRecord> batch = new RecordsBySplits.Builder<>();
        boolean progressed = false;
        long lag = 0;
        for (Iterator<Map.Entry<String, SubtaskStreamReader>> it = streams.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, SubtaskStreamReader> entry = it.next();
            SubtaskStreamReader stream = entry.getValue();
            int read = 0;
            for (LogRecord record = stream.next(); record != null; record = read < BATCH ? stream.next() : null) {
                read++;
                if (isProtocolTuple(record)) {
                    batch.add(entry.getKey(), new PositionedRecord(record, stream.position()));
                }
            }
            progressed |= read > 0;
            if (read < BATCH) {
                if (!stream.follows()) {
                    batch.addFinishedSplit(entry.getKey());
                    stream.close();
                    it.remove();
                    continue;
                }
                progressed |= stream.refreshEvery(POLL_MILLIS);
            }
            lag += stream.lagBytes();
        }
        lagBytes.set(lag);
        if (!progressed && !streams.isEmpty()) {
            awaitPollOrWakeUp();
        }
        return batch.build();
    }

    /**
     * Whether a log record is a CEC tuple (OPEN, CHECK, RESULT). The payload starts with the
     * tuple's kind code; records of other kinds are the operator's own and are skipped.
     */
    private static boolean isProtocolTuple(LogRecord record) {
        byte[] payload = record.payload();
        return payload.length > 0 && payload[0] >= 0 && payload[0] <= CecRecordKind.RESULT.code();
    }

    private void awaitPollOrWakeUp() {
        synchronized (wakeUp) {
            try {
                if (!wokenUp) {
                    wakeUp.wait(POLL_MILLIS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                wokenUp = false;
            }
        }
    }

    @Override
    public void handleSplitsChanges(SplitsChange<CecLogSplit> splitsChanges) {
        for (CecLogSplit split : splitsChanges.splits()) {
            streams.put(split.splitId(), new SubtaskStreamReader(split));
        }
    }

    @Override
    public void wakeUp() {
        synchronized (wakeUp) {
            wokenUp = true;
            wakeUp.notifyAll();
        }
    }

    @Override
    public void close() throws IOException {
        for (SubtaskStreamReader stream : streams.values()) {
            stream.close();
        }
    }
}
