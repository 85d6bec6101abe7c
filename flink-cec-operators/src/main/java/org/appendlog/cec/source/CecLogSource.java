package org.appendlog.cec.source;

import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecRecordSerializer;
import org.appendlog.cec.log.LogPosition;
import org.appendlog.cec.log.PersistedStream;

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.io.SimpleVersionedSerializer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * A bounded FLIP-27 source that reads a CEC operator's persisted stream back, from a timestamp
 * on: every committed tuple with timestamp at or after it, in log order per subtask stream, with
 * the tuple's timestamp as record timestamp. Used for history on demand and to replay a CEC
 * operator's output into another job.
 *
 * <pre>{@code
 * env.fromSource(CecLogSource.of("hdfs:///cec/wordcount", cecStream.getType(), t0),
 *                WatermarkStrategy.noWatermarks(), "cec history")
 * }</pre>
 */
public final class CecLogSource<K, W, ACC, OUT>
        implements Source<CecRecord<K, W, ACC, OUT>, CecLogSplit, Collection<CecLogSplit>>,
                ResultTypeQueryable<CecRecord<K, W, ACC, OUT>> {

    private static final long serialVersionUID = 1L;

    private final String path;
    private final TypeInformation<CecRecord<K, W, ACC, OUT>> type;
    private final long fromTimestamp;

    private CecLogSource(String path, TypeInformation<CecRecord<K, W, ACC, OUT>> type, long fromTimestamp) {
        this.path = path;
        this.type = type;
        this.fromTimestamp = fromTimestamp;
    }

    /**
     * @param path the operator's {@code cec.log.path}
     * @param type the type of the operator's output, e.g. {@code cecStream.getType()}
     * @param fromTimestamp the earliest tuple timestamp to return ({@code Long.MIN_VALUE} for all)
     */
    public static <K, W, ACC, OUT> CecLogSource<K, W, ACC, OUT> of(
            String path, TypeInformation<CecRecord<K, W, ACC, OUT>> type, long fromTimestamp) {
        return new CecLogSource<>(path, type, fromTimestamp);
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.BOUNDED;
    }

    @Override
    @SuppressWarnings("unchecked")
    public SourceReader<CecRecord<K, W, ACC, OUT>, CecLogSplit> createReader(SourceReaderContext context) {
        CecRecordSerializer<K, W, ACC, OUT> serializer =
                (CecRecordSerializer<K, W, ACC, OUT>) type.createSerializer(new SerializerConfigImpl());
        return new CecLogSourceReader<>(context, serializer);
    }

    @Override
    public SplitEnumerator<CecLogSplit, Collection<CecLogSplit>> createEnumerator(
            SplitEnumeratorContext<CecLogSplit> context) throws IOException {
        return new CecLogEnumerator(context, discoverSplits());
    }

    /** One split per subtask stream that has committed anything, ending at its latest commit. */
    List<CecLogSplit> discoverSplits() throws IOException {
        Path root = new Path(path);
        FileSystem fs = root.getFileSystem();
        List<CecLogSplit> splits = new ArrayList<>();
        for (Path directory : PersistedStream.subtaskDirectories(fs, root)) {
            Optional<LogPosition> end = PersistedStream.committedEnd(fs, directory);
            if (end.isPresent()) {
                splits.add(new CecLogSplit(directory.toString(), end.get(), fromTimestamp, null));
            }
        }
        return splits;
    }

    @Override
    public SplitEnumerator<CecLogSplit, Collection<CecLogSplit>> restoreEnumerator(
            SplitEnumeratorContext<CecLogSplit> context, Collection<CecLogSplit> checkpoint) {
        return new CecLogEnumerator(context, checkpoint);
    }

    @Override
    public SimpleVersionedSerializer<CecLogSplit> getSplitSerializer() {
        return CecLogSplitSerializer.INSTANCE;
    }

    @Override
    public SimpleVersionedSerializer<Collection<CecLogSplit>> getEnumeratorCheckpointSerializer() {
        return new CecLogEnumeratorStateSerializer();
    }

    @Override
    public TypeInformation<CecRecord<K, W, ACC, OUT>> getProducedType() {
        return type;
    }
}
