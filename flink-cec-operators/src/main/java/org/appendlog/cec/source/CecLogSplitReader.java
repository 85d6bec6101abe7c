package org.appendlog.cec.source;

import org.appendlog.cec.log.ForwardLogReader;
import org.appendlog.cec.log.LogRecord;
import org.appendlog.cec.log.PersistedStream;

import org.apache.flink.connector.base.source.reader.RecordsBySplits;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsChange;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Queue;

/** Reads the assigned splits one after the other, in batches, on the fetcher thread. */
final class CecLogSplitReader implements SplitReader<PositionedRecord, CecLogSplit> {

    private static final int BATCH = 1024;

    private final Queue<CecLogSplit> pending = new ArrayDeque<>();
    @Nullable private CecLogSplit current;
    @Nullable private ForwardLogReader reader;

    @Override
    public RecordsWithSplitIds<PositionedRecord> fetch() throws IOException {
        RecordsBySplits.Builder<PositionedRecord> batch = new RecordsBySplits.Builder<>();
        if (current == null) {
            current = pending.poll();
            if (current == null) {
                return batch.build();
            }
            Path directory = new Path(current.directory());
            FileSystem fs = directory.getFileSystem();
            reader = new ForwardLogReader(
                    fs,
                    PersistedStream.chainEndingAt(fs, directory, current.committedEnd()),
                    current.fromTimestamp(),
                    current.resumeAt());
        }
        for (int i = 0; i < BATCH; i++) {
            LogRecord record = reader.next();
            if (record == null) {
                batch.addFinishedSplit(current.splitId());
                reader.close();
                reader = null;
                current = null;
                break;
            }
            batch.add(current.splitId(), new PositionedRecord(record, reader.position()));
        }
        return batch.build();
    }

    @Override
    public void handleSplitsChanges(SplitsChange<CecLogSplit> splitsChanges) {
        pending.addAll(splitsChanges.splits());
    }

    @Override
    public void wakeUp() {}

    @Override
    public void close() throws IOException {
        if (reader != null) {
            reader.close();
        }
    }
}
