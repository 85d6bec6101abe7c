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
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * A FLIP-27 source that reads a CEC operator's persisted stream back, from a timestamp on: every
 * committed tuple with timestamp at or after it, in log order per subtask stream, with the tuple's
 * timestamp as record timestamp. {@link #of} is bounded: it reads up to each subtask stream's
 * latest commit when the job starts (history on demand, replay into another job). {@link
 * #following} is unbounded: it follows the stream as the writing job commits, also subtask
 * directories that appear later, and reports its lag as {@link CecLogSourceMetrics#LAG_BYTES}.
 * Either way it returns only committed tuples (read committed), never a tail that a failed
 * attempt of the writing job wrote after its last completed checkpoint.
 *
 * <p>If log retention deleted records at or after {@code fromTimestamp}, reading a subtask
 * stream fails with an error naming the directory and the earliest timestamp still available.
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
        implements Source<CecRecord<K, W, ACC, OUT>, CecLogSplit, CecLogEnumeratorState>,
                ResultTypeQueryable<CecRecord<K, W, ACC, OUT>>,
                OutputTypeConfigurable<CecRecord<K, W, ACC, OUT>> {

    private static final long serialVersionUID = 1L;

    private final String path;
    private final TypeInformation<CecRecord<K, W, ACC, OUT>> type;
    private final long fromTimestamp;
    private final boolean following;
    @Nullable private TypeSerializer<CecRecord<K, W, ACC, OUT>> serializer;

    private CecLogSource(
            String path, TypeInformation<CecRecord<K, W, ACC, OUT>> type, long fromTimestamp, boolean following) {
        // Any other type (say, from TypeInformation.of(CecRecord.class)) would decode the log with
        // serializers it was not written with: fail while the job is built, not on reading.
        if (!(type instanceof CecRecordTypeInfo)) {
            throw new IllegalArgumentException(
                    "CecLogSource for " + path + " needs the CecRecordTypeInfo of the CEC operator's output "
                            + "(cecStream.getType() of the operator that writes " + path + "), but was given " + type
                            + " (" + (type == null ? "null" : type.getClass().getName()) + ").");
        }
        this.path = path;
        this.type = type;
        this.fromTimestamp = fromTimestamp;
        this.following = following;
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
        return new CecLogSource<>(path, type, fromTimestamp, false);
    }

    /**
     * An unbounded source that follows the stream under {@code path} as the writing job commits
     * it (looking for new commits every {@link CecLogSplitReader#POLL_MILLIS} ms and for new
     * subtask directories every {@link CecLogFollowingEnumerator#DISCOVERY_MILLIS} ms), from
     * {@code fromTimestamp} on. The path need not exist yet. Parameters as for {@link #of}.
     */
    public static <K, W, ACC, OUT> CecLogSource<K, W, ACC, OUT> following(
            String path, TypeInformation<CecRecord<K, W, ACC, OUT>> type, long fromTimestamp) {
        return new CecLogSource<>(path, type, fromTimestamp, true);
    }

    @Override
    public Boundedness getBoundedness() {
        return following ? Boundedness.CONTINUOUS_UNBOUNDED : Boundedness.BOUNDED;
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
    public SplitEnumerator<CecLogSplit, CecLogEnumeratorState> createEnumerator(
            SplitEnumeratorContext<CecLogSplit> context) throws IOException {
        if (following) {
            return new CecLogFollowingEnumerator(
                    context, new Path(path), fromTimestamp, Collections.emptyList(), Collections.emptySet());
        }
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
    public SplitEnumerator<CecLogSplit, CecLogEnumeratorState> restoreEnumerator(
            SplitEnumeratorContext<CecLogSplit> context, CecLogEnumeratorState checkpoint) {
        if (following) {
            return new CecLogFollowingEnumerator(
                    context, new Path(path), fromTimestamp, checkpoint.unassigned(), checkpoint.discovered());
        }
        return new CecLogEnumerator(context, checkpoint.unassigned());
    }

    @Override
    public SimpleVersionedSerializer<CecLogSplit> getSplitSerializer() {
        return CecLogSplitSerializer.INSTANCE;
    }

    @Override
    public SimpleVersionedSerializer<CecLogEnumeratorState> getEnumeratorCheckpointSerializer() {
        return new CecLogEnumeratorStateSerializer();
    }

    @Override
    public TypeInformation<CecRecord<K, W, ACC, OUT>> getProducedType() {
        return type;
    }
}
