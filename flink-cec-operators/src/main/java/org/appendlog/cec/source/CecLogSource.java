package org.appendlog.cec.source;

import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecRecordTypeInfo;
import org.appendlog.cec.log.LogPosition;
import org.appendlog.cec.log.PersistedStream;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
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
import org.apache.flink.streaming.api.operators.OutputTypeConfigurable;

import javax.annotation.Nullable;

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
 * <p>The records are decoded with a serializer built from the reading job's {@code
 * ExecutionConfig} (as the operator's was built from its job's), so Kryo registrations and
 * registered Kryo serializers must be the same in both jobs.
 *
 * <pre>{@code
 * env.fromSource(CecLogSource.of("hdfs:///cec/wordcount", cecStream.getType(), t0),
 *                WatermarkStrategy.noWatermarks(), "cec history")
 * }</pre>
 */
public final class CecLogSource<K, W, ACC, OUT>
        implements Source<CecRecord<K, W, ACC, OUT>, CecLogSplit, Collection<CecLogSplit>>,
                ResultTypeQueryable<CecRecord<K, W, ACC, OUT>>,
                OutputTypeConfigurable<CecRecord<K, W, ACC, OUT>> {

    private static final long serialVersionUID = 1L;

    private final String path;
    private final TypeInformation<CecRecord<K, W, ACC, OUT>> type;
    private final long fromTimestamp;
    @Nullable private TypeSerializer<CecRecord<K, W, ACC, OUT>> serializer;

    private CecLogSource(String path, TypeInformation<CecRecord<K, W, ACC, OUT>> type, long fromTimestamp) {
        this.path = path;
        this.type = type;
        this.fromTimestamp = fromTimestamp;
    }

    /**
     * @param path the operator's {@code cec.log.path}
     * @param type the type of the operator's output, {@code cecStream.getType()}: a {@link
     *     CecRecordTypeInfo}, which decodes the log as the operator encoded it
     * @param fromTimestamp the earliest tuple timestamp to return ({@code Long.MIN_VALUE} for all)
     * @throws IllegalArgumentException if {@code type} is not a {@link CecRecordTypeInfo}
     */
    public static <K, W, ACC, OUT> CecLogSource<K, W, ACC, OUT> of(
            String path, TypeInformation<CecRecord<K, W, ACC, OUT>> type, long fromTimestamp) {
        // Any other type (say, from TypeInformation.of(CecRecord.class)) would decode the log with
        // serializers it was not written with: fail while the job is built, not on reading.
        if (!(type instanceof CecRecordTypeInfo)) {
            throw new IllegalArgumentException(
                    "CecLogSource for " + path + " needs the CecRecordTypeInfo of the CEC operator's output "
                            + "(cecStream.getType() of the operator that writes " + path + "), but was given " + type
                            + " (" + (type == null ? "null" : type.getClass().getName()) + ").");
        }
        return new CecLogSource<>(path, type, fromTimestamp);
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.BOUNDED;
    }

    /**
     * Called by Flink while it builds the job graph, with the job's {@code ExecutionConfig}, from
     * which it also builds the job's network serializers. The log is decoded as the operator's
     * output type, whatever type the job declared for the source.
     */
    @Override
    public void setOutputType(TypeInformation<CecRecord<K, W, ACC, OUT>> outTypeInfo, ExecutionConfig executionConfig) {
        serializer = type.createSerializer(executionConfig.getSerializerConfig());
    }

    @Override
    public SourceReader<CecRecord<K, W, ACC, OUT>, CecLogSplit> createReader(SourceReaderContext context) {
        if (serializer == null) {
            throw new IllegalStateException(
                    "CecLogSource for " + path + " has no serializer from the job's ExecutionConfig; add it to a "
                            + "job with StreamExecutionEnvironment#fromSource.");
        }
        return new CecLogSourceReader<>(context, serializer.duplicate());
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
