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

package org.appendlog.cec.operator;

import org.appendlog.cec.api.CecConfigOptions;
import org.appendlog.cec.api.CecMode;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecRecordSerializer;
import org.appendlog.cec.api.CecRecordTypeInfo;
import org.appendlog.cec.log.CommitMarker;
import org.appendlog.cec.log.LogCleaner;
import org.appendlog.cec.log.LogPosition;
import org.appendlog.cec.log.LogRetention;
import org.appendlog.cec.log.LogWriter;
import org.appendlog.cec.log.ObjectStoreRefusal;
import org.appendlog.cec.log.OwnerMarker;
import org.appendlog.cec.log.PersistedStream;
import org.appendlog.cec.log.SegmentSync;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.graph.StreamConfig;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFutures;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * A keyed window operator with Continuous Eventual Checkpointing. Window state lives on the heap,
 * one accumulator per (key, window), and never in Flink state. Every tuple the operator emits
 * (OPEN, CHECK, RESULT) is first appended to the subtask's persisted stream and then forwarded.
 * Flink state receives only log positions and the number of open windows ({@link
 * CheckpointedPosition}). Per {@link CecMode}:
 *
 * <ul>
 *   <li>eventual (and open-only): every element is logged as an INPUT record ({@link LoggedInput})
 *       after the OPENs it causes. The policy writes a CHECK for every slow window (open for at
 *       least H) at least every T, up to M per shot (none in open-only mode). A barrier writes no
 *       CHECK; the log is synced in the checkpoint's asynchronous part ({@link
 *       DurableLogSnapshot}). A restore replays the log from the oldest footprint of an open
 *       window ({@link WindowReplay}).
 *   <li>barrier: every period T a CHECK for up to M windows changed since a footprint at least H
 *       old; before a barrier a CHECK for every changed window and a sync. A restore scans the
 *       log backwards for the footprints ({@link WindowRecovery}).
 * </ul>
 *
 * <p>A restored subtask continues the stream in a new segment that links back to exactly the
 * checkpointed position, which cuts off whatever the failed attempt wrote after it. A restore at
 * another parallelism reads every stream of the checkpoint for the windows (and, when the input is
 * logged, the INPUT records) of its own key groups and writes a new generation of streams, which
 * starts with a CHECK of each window it restored; the old streams stay as the checkpoint left them,
 * but for what the user retention deletes ({@link AdoptedStream}).
 *
 * <p>Time windows fire at their end (event or processing time, no allowed lateness, as Flink's
 * default triggers); count windows fire and purge at their size. Late records are dropped and
 * counted in {@code numLateRecordsDropped}.
 */
public final class CecWindowOperator<K, IN, ACC, OUT, W extends Window>
        extends AbstractStreamOperator<CecRecord<K, W, ACC, OUT>>
        implements OneInputStreamOperator<IN, CecRecord<K, W, ACC, OUT>> {

    private static final long serialVersionUID = 1L;

    static final String STATE_NAME = "cec-log-position";
    /** The positions of the earlier generations' streams that the subtasks prune (union list state). */
    static final String ADOPTED_STATE_NAME = "cec-adopted-streams";

    private final WindowAssigner<? super IN, W> assigner;
    private final TypeInformation<IN> inputType;
    private final long countSize;
    private final AggregateFunction<IN, ACC, OUT> aggregate;
    private final CecRecordTypeInfo<K, W, ACC, OUT> type;
    private final CecOptions options;

    private transient Map<OpenWindow.Id<K, W>, OpenWindow<K, W, ACC>> windows;
    private transient TreeSet<OpenWindow<?, ?, ?>> byEnd;
    private transient FootprintTracker footprints;
    private transient WindowAssigner.WindowAssignerContext assignerContext;
    /** The processing time the window assignment of the current element sees (logged with it). */
    private transient long assignmentTime;
    private transient List<OpenWindow<K, W, ACC>> targets;
    private transient boolean logsInput;
    private transient LoggedInput<K, IN> input;
    /** When the eventual policy shoots next, on its clock ({@link #operatorTime()}). */
    private transient long nextShot;
    private transient long creations;
    private transient long streamTime;
    private transient long watermark;
    /**
     * Whether the end-of-input watermark came: every window fired and later records are late, as
     * in Flink's window operator, but {@link #watermark} keeps the last point in event time, which
     * is what a checkpoint records.
     */
    private transient boolean endOfEventTime;
    private transient long windowTimer;

    private transient FileSystem fs;
    /** The generation of this subtask's stream: 0, or the checkpoint that a rescale restored. */
    private transient long generation;
    private transient Path directory;
    private transient LogWriter log;
    /** Windows restored from another parallelism's streams, to be checked into this stream on open. */
    @Nullable private transient List<OpenWindow<K, W, ACC>> rescaledWindows;
    private transient LogRetention retention;
    /** Applies the retention after each completed checkpoint, off the task thread. */
    private transient LogCleaner cleaner;
    /** Whether the input ended ({@link #finish()}), so that closing lets the cleaner complete. */
    private transient boolean finished;
    /** Streams of earlier generations whose old subtask index is congruent to this one's. */
    private transient List<AdoptedStream> adopted;
    private transient ListState<byte[]> positionState;
    private transient ListState<byte[]> adoptedState;
    private transient NavigableMap<Long, CheckpointedPosition> pendingCommits;
    /** Per checkpoint, the segment to sync in its asynchronous part (modes that log the input). */
    private transient NavigableMap<Long, SegmentSync> pendingSyncs;
    private transient DataOutputSerializer payload;
    private transient StreamRecord<CecRecord<K, W, ACC, OUT>> reuse;
    private transient CecRecordSerializer<K, W, ACC, OUT> serializer;
    private transient TypeSerializer<ACC> accumulatorSerializer;

    private transient Counter lateRecordsDropped;
    private transient Counter openTuples;
    private transient Counter checkTuples;
    private transient Counter barrierCheckTuples;
    private transient Histogram barrierMicros;
    /** Task-thread nanoseconds of the checkpoint being taken, spent before its barrier. */
    private transient long preBarrierNanos;
    private transient Counter resultTuples;
    private transient Counter inputTuples;
    private transient Counter bytesPersisted;
    private transient long recoveryMillis;
    private transient long recoveryRecordsScanned;
    private transient long replayedInputs;

    /**
     * @param countSize the size of a count window (with {@code GlobalWindows}), or 0 for time
     *     windows
     */
    public CecWindowOperator(
            WindowAssigner<? super IN, W> assigner,
            TypeInformation<IN> inputType,
            long countSize,
            AggregateFunction<IN, ACC, OUT> aggregate,
            CecRecordTypeInfo<K, W, ACC, OUT> type,
            CecOptions options) {
        setChainingStrategy(ChainingStrategy.ALWAYS);
        this.assigner = assigner;
        this.inputType = inputType;
        this.countSize = countSize;
        this.aggregate = aggregate;
        this.type = type;
        this.options = options;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        windows = new HashMap<>();
        byEnd = new TreeSet<>(OpenWindow.BY_END);
        footprints = new FootprintTracker(runsEventualPolicy());
        targets = new ArrayList<>();
        pendingCommits = new TreeMap<>();
        pendingSyncs = new TreeMap<>();
        payload = new DataOutputSerializer(256);
        reuse = new StreamRecord<>(null);
        // From the job's ExecutionConfig as it is at execution, as Flink builds the network serializers:
        // configuration made after aggregate() (Kryo registrations, a custom assigner's window
        // serializer) counts, for the log as for the network.
        serializer = type.createSerializer(getExecutionConfig().getSerializerConfig());
        accumulatorSerializer = serializer.getAccumulatorSerializer();
        logsInput = options.mode().logsInput();
        // Also in barrier mode: a checkpoint taken in another mode may need its input replayed.
        input = new LoggedInput<>(
                serializer.getKeySerializer(), inputType.createSerializer(getExecutionConfig().getSerializerConfig()));
        nextShot = Long.MIN_VALUE;
        streamTime = Long.MIN_VALUE;
        watermark = Long.MIN_VALUE;
        endOfEventTime = false;
        windowTimer = Long.MAX_VALUE;
        assignerContext =
                new WindowAssigner.WindowAssignerContext() {
                    @Override
                    public long getCurrentProcessingTime() {
                        return assignmentTime;
                    }
                };
        registerMetrics();

        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        int parallelism = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
        fs = options.logPath().getFileSystem();
        ObjectStoreRefusal.checkKind(CecConfigOptions.LOG_PATH.key(), options.logPath(), fs);
        positionState =
                context.getOperatorStateStore()
                        .getUnionListState(
                                new ListStateDescriptor<>(
                                        STATE_NAME, PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
        adoptedState =
                context.getOperatorStateStore()
                        .getUnionListState(
                                new ListStateDescriptor<>(
                                        ADOPTED_STATE_NAME, PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));

        // Before the claim: state that cannot be read must leave the log path as it was.
        List<CheckpointedPosition> restored = new ArrayList<>();
        List<CheckpointedPosition> older = new ArrayList<>();
        if (context.isRestored()) {
            for (byte[] bytes : positionState.get()) {
                restored.add(CheckpointedPosition.fromBytes(bytes));
            }
            for (byte[] bytes : adoptedState.get()) {
                older.add(CheckpointedPosition.fromBytes(bytes));
            }
        }
        long restoredCheckpoint = context.getRestoredCheckpointId().orElse(0L);
        CheckpointedPosition own = null;
        for (CheckpointedPosition position : restored) {
            if (position.parallelism == parallelism && position.subtask == subtask) {
                own = position;
            }
        }
        boolean rescaled = !restored.isEmpty() && restored.get(0).parallelism != parallelism;
        generation = own != null ? own.generation : rescaled ? restoredCheckpoint : 0;
        directory = PersistedStream.subtaskDirectory(options.logPath(), generation, subtask);
        retention = new LogRetention(fs, directory, options.retentionMillis(), options.retentionBytes());
        if (rescaled) {
            older.addAll(restored); // the generation this restore leaves behind
        }
        Set<Long> lineage = new HashSet<>();
        lineage.add(generation);
        for (CheckpointedPosition position : restored) {
            lineage.add(position.generation);
        }
        for (CheckpointedPosition position : older) {
            lineage.add(position.generation);
        }
        adopted = new ArrayList<>();
        for (CheckpointedPosition position : older) {
            if (position.subtask % parallelism == subtask) {
                adopted.add(new AdoptedStream(position, fs, options));
            }
        }
        claimDirectory();
        if (own != null) {
            restore(own);
            // Readers follow the restored stream from now on, not a later one that the restore
            // (say, from an older savepoint) abandoned.
            PersistedStream.commit(fs, directory, new CommitMarker(restoredCheckpoint, own.end, jobId()));
        } else if (rescaled) {
            restoreRescaled(restored, restoredCheckpoint);
        } else {
            startNewStream();
        }
        withdrawOtherBranches(lineage);
    }

    /** Fails if another operator writes the same directory: the two would commit over each other. */
    private void claimDirectory() throws IOException {
        OwnerMarker self = self();
        List<OwnerMarker> others = OwnerMarker.claim(fs, options.logPath(), directory, self);
        if (!others.isEmpty()) {
            throw new IllegalStateException(
                    "CEC log path " + options.logPath() + " is written by " + others.get(0) + " and by " + self
                            + " (refused at " + directory.getName() + "): both are configured with it as '"
                            + CecConfigOptions.LOG_PATH.key() + "'. Give each CEC operator its own directory.");
        }
    }

    /** This operator as its owner marker names it: its own name (not the task's) and its id. */
    private OwnerMarker self() {
        return new OwnerMarker(getOperatorID().toHexString(), getOperatorConfig().getOperatorName());
    }

    private void startNewStream() throws IOException {
        Optional<CommitMarker> earlier = PersistedStream.latestCommit(fs, directory);
        if (earlier.isPresent()) {
            if (!earlier.get().jobId().equals(jobId())) {
                throw new IllegalStateException(
                        "CEC log directory " + directory + " already holds a committed stream (" + earlier.get()
                                + "), but the operator '" + getOperatorName() + "' of job " + jobId()
                                + " starts without restored state. Give '" + CecConfigOptions.LOG_PATH.key()
                                + "' an empty directory or restore the job from its checkpoint.");
            }
            // The same job restarted without a checkpoint to restore: its sources start over too. The new
            // chain's commits come later, so they supersede the earlier ones for readers.
            LOG.warn(
                    "CEC operator '{}' restarts without restored state although {} holds {}; starting a new chain",
                    getOperatorName(), directory, earlier.get());
        }
        log = new LogWriter(
                fs, directory, subtaskIndex(), 0L, null, options.segmentBytes(), options.indexIntervalBytes(),
                options.logPermissions());
    }

    private void restore(CheckpointedPosition position) throws Exception {
        long start = System.nanoTime();
        recover(position, directory, key -> true);
        streamTime = position.streamTime;
        watermark = position.watermark;
        // A new segment that links back to the checkpointed end: the old attempt's tail is cut off.
        log = new LogWriter(
                fs, directory, subtaskIndex(), position.segmentSequence + 1, position.end, options.segmentBytes(),
                options.indexIntervalBytes(), options.logPermissions());
        recoveryMillis = (System.nanoTime() - start) / 1_000_000;
        LOG.info(
                "CEC operator '{}' restored {} open windows from {} at {} (recovery horizon {}): read {} records, "
                        + "replayed {} inputs in {} ms",
                getOperatorName(), windows.size(), directory, position.end, position.horizon, recoveryRecordsScanned,
                replayedInputs, recoveryMillis);
    }

    /**
     * Restores the windows of this subtask's key groups from every stream of a checkpoint taken at
     * another parallelism, and starts this subtask's stream of the new generation, committed empty
     * at once (superseding what an earlier attempt of the same rescale wrote there).
     */
    private void restoreRescaled(List<CheckpointedPosition> positions, long checkpointId) throws Exception {
        long start = System.nanoTime();
        int parallelism = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
        int maxParallelism = getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks();
        KeyGroupRange keyGroups =
                KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(maxParallelism, parallelism, subtaskIndex());
        Predicate<K> owned = key -> keyGroups.contains(KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism));
        rescaledWindows = new ArrayList<>();
        for (CheckpointedPosition position : positions) {
            Path old = PersistedStream.subtaskDirectory(options.logPath(), position.generation, position.subtask);
            if (position.subtask % parallelism == subtaskIndex()) {
                // One new subtask per old stream: readers see it as of the restored checkpoint.
                PersistedStream.commit(fs, old, new CommitMarker(checkpointId, position.end, jobId()));
            }
            rescaledWindows.addAll(recover(position, old, owned));
            // A window that fired in any old subtask must not open again.
            streamTime = Math.max(streamTime, position.streamTime);
            watermark = Math.max(watermark, position.watermark);
        }
        log = new LogWriter(
                fs, directory, subtaskIndex(), 0L, null, options.segmentBytes(), options.indexIntervalBytes(),
                options.logPermissions());
        log.sync(); // the committed start must be readable
        PersistedStream.commit(fs, directory, new CommitMarker(checkpointId, log.position(), jobId()));
        recoveryMillis = (System.nanoTime() - start) / 1_000_000;
        LOG.info(
                "CEC operator '{}' restored {} open windows of key groups {} from {} streams of parallelism {} under {}"
                        + " into {}: read {} records, replayed {} inputs in {} ms",
                getOperatorName(), windows.size(), keyGroups, positions.size(), positions.get(0).parallelism,
                options.logPath(), directory, recoveryRecordsScanned, replayedInputs, recoveryMillis);
    }

    /** Rebuilds the windows of owned keys that were open at {@code position} of {@code stream} and adds them. */
    private List<OpenWindow<K, W, ACC>> recover(CheckpointedPosition position, Path stream, Predicate<K> owned)
            throws IOException {
        List<OpenWindow<K, W, ACC>> restored;
        if (position.inputLogged) {
            WindowReplay<K, IN, W, ACC> replay =
                    WindowReplay.replay(fs, stream, position, serializer, input, assigner, aggregate, owned, creations);
            restored = replay.windows();
            recoveryRecordsScanned += replay.recordsScanned();
            replayedInputs += replay.inputsReplayed();
        } else {
            WindowRecovery<K, W, ACC> recovery =
                    WindowRecovery.scan(
                            fs, stream, position.end, position.openWindows, serializer, aggregate::createAccumulator,
                            owned, creations);
            restored = recovery.windows();
            recoveryRecordsScanned += recovery.recordsScanned();
        }
        long now = getProcessingTimeService().getCurrentProcessingTime();
        for (OpenWindow<K, W, ACC> window : restored) {
            windows.put(window.id(), window);
            if (countSize == 0) {
                byEnd.add(window);
            }
            creations = Math.max(creations, window.creation + 1);
            footprints.footprinted(window, now, window.footprintPosition);
            footprints.opened(window);
            if (position.inputLogged && !logsInput) {
                // Replayed input is not in the footprint; the next barrier must check the window.
                footprints.changed(window);
            }
        }
        return restored;
    }

    /**
     * Withdraws the streams of every generation outside {@code lineage}, the generations the restored
     * state descends from (its own streams and the old streams it adopted) and this subtask's own:
     * they belong to runs this restore abandoned, later ones or, after going back to an older
     * checkpoint, a branch that an earlier restore started, and readers must not see their results
     * next to the ones written again here. Each subtask takes the old subtask indexes congruent to its
     * own.
     */
    private void withdrawOtherBranches(Set<Long> lineage) throws IOException {
        int parallelism = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
        for (Path stream : PersistedStream.subtaskDirectories(fs, options.logPath())) {
            if (!lineage.contains(PersistedStream.generationOf(stream))
                    && PersistedStream.subtaskOf(stream) % parallelism == subtaskIndex()) {
                PersistedStream.withdraw(fs, stream);
            }
        }
    }

    private String jobId() {
        return getRuntimeContext().getJobInfo().getJobId().toString();
    }

    private int subtaskIndex() {
        return getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
    }

    private void registerMetrics() {
        lateRecordsDropped = getMetricGroup().counter(CecMetrics.LATE_RECORDS_DROPPED);
        openTuples = getMetricGroup().counter(CecMetrics.OPEN_TUPLES);
        checkTuples = getMetricGroup().counter(CecMetrics.CHECK_TUPLES);
        barrierCheckTuples = getMetricGroup().counter(CecMetrics.BARRIER_CHECK_TUPLES);
        barrierMicros = getMetricGroup().histogram(CecMetrics.BARRIER_MICROS, new DescriptiveStatisticsHistogram(1000));
        resultTuples = getMetricGroup().counter(CecMetrics.RESULT_TUPLES);
        inputTuples = getMetricGroup().counter(CecMetrics.INPUT_TUPLES);
        getMetricGroup().gauge(CecMetrics.OPEN_WINDOWS, () -> windows.size());
        bytesPersisted = getMetricGroup().counter(CecMetrics.BYTES_PERSISTED);
        getMetricGroup().gauge(CecMetrics.RECOVERY_MILLIS, () -> recoveryMillis);
        getMetricGroup().gauge(CecMetrics.RECOVERY_RECORDS_SCANNED, () -> recoveryRecordsScanned);
        getMetricGroup().gauge(CecMetrics.REPLAY_RECORDS, () -> replayedInputs);
    }

    @Override
    public void open() throws Exception {
        super.open();
        cleaner = new LogCleaner("CEC operator '" + getOperatorName() + "'");
        if (rescaledWindows != null) {
            // Their footprints are in the old streams: a CHECK of each here makes this stream
            // self-contained, so that its own restores never read the old generation.
            checkpointWindows(rescaledWindows);
            rescaledWindows = null;
        }
        if (options.periodMillis() > 0 && options.mode() == CecMode.BARRIER) {
            schedulePolicy();
        }
        if (runsEventualPolicy() && !assigner.isEventTime()) {
            getProcessingTimeService().registerTimer(now() + options.periodMillis(), this::onShotTimer);
        }
        scheduleWindowTimer();
    }

    // ---------------------------------------------------------------------------------------------
    // Elements and time
    // ---------------------------------------------------------------------------------------------

    @Override
    @SuppressWarnings("unchecked")
    public void processElement(StreamRecord<IN> element) throws Exception {
        K key = (K) getCurrentKey();
        IN value = element.getValue();
        assignmentTime = now();
        Collection<W> assigned = assigner.assignWindows(value, element.getTimestamp(), assignerContext);
        targets.clear();
        for (W w : assigned) {
            if (isLate(w)) {
                continue;
            }
            OpenWindow<K, W, ACC> window = windows.get(new OpenWindow.Id<>(key, w));
            targets.add(window == null ? openWindow(key, w) : window);
        }
        if (targets.isEmpty()) {
            if (assigner.isEventTime() && element.getTimestamp() <= effectiveWatermark()) {
                lateRecordsDropped.inc();
            }
        } else if (logsInput) {
            // After the OPENs: a window's footprint holds the inputs logged before it, and an OPEN none.
            payload.clear();
            input.write(key, value, element.getTimestamp(), assignmentTime, payload);
            persist(stamp(operatorTime()));
            inputTuples.inc();
        }
        for (OpenWindow<K, W, ACC> window : targets) {
            window.accumulator = aggregate.add(value, window.accumulator);
            window.count++;
            if (!logsInput) {
                footprints.changed(window);
            }
            if (countSize > 0 && window.count >= countSize) {
                fire(window, now());
            }
        }
        scheduleWindowTimer();
    }

    private boolean isLate(W window) {
        return assigner.isEventTime() && window.maxTimestamp() <= effectiveWatermark();
    }

    private long effectiveWatermark() {
        return endOfEventTime ? Long.MAX_VALUE : watermark;
    }

    private OpenWindow<K, W, ACC> openWindow(K key, W w) throws IOException {
        OpenWindow<K, W, ACC> window = new OpenWindow<>(key, w, creations++, aggregate.createAccumulator(), 0);
        windows.put(window.id(), window);
        if (countSize == 0) {
            byEnd.add(window);
        }
        // The OPEN tuple is the footprint of the empty window, written before the element is added.
        long t = stamp(operatorTime());
        emit(CecRecord.open(key, w, t, windows.size()));
        openTuples.inc();
        window.openTime = t;
        footprints.footprinted(window, now(), log.lastRecordPosition());
        footprints.opened(window);
        return window;
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        if (assigner.isEventTime()) {
            if (mark.getTimestamp() == Watermark.MAX_WATERMARK.getTimestamp()) {
                // End of input (or stop --drain): fires every window, and later records of this run are
                // late (another input may resume after it), but it is no point in event time: not
                // checkpointed, so a restore from the final checkpoint or the drain's savepoint windows
                // new input as Flink's window operator does, instead of dropping all of it as late.
                endOfEventTime = true;
                fireUpTo(Long.MAX_VALUE);
            } else {
                watermark = Math.max(watermark, mark.getTimestamp());
                fireUpTo(watermark);
                if (runsEventualPolicy() && watermark >= nextShot) {
                    shoot(watermark);
                }
            }
        }
        super.processWatermark(mark);
    }

    private void fireUpTo(long time) throws IOException {
        long now = now();
        while (!byEnd.isEmpty() && byEnd.first().window.maxTimestamp() <= time) {
            @SuppressWarnings("unchecked")
            OpenWindow<K, W, ACC> window = (OpenWindow<K, W, ACC>) byEnd.first();
            fire(window, now);
        }
    }

    private void fire(OpenWindow<K, W, ACC> window, long now) throws IOException {
        windows.remove(window.id());
        byEnd.remove(window);
        footprints.closed(window);
        long candidate = countSize > 0 ? operatorTime() : window.window.maxTimestamp();
        emit(CecRecord.result(
                window.key, window.window, stamp(candidate), windows.size(), window.count,
                aggregate.getResult(window.accumulator)));
        resultTuples.inc();
    }

    private void scheduleWindowTimer() {
        if (assigner.isEventTime() || byEnd.isEmpty()) {
            return;
        }
        long next = byEnd.first().window.maxTimestamp();
        if (next < windowTimer) {
            windowTimer = next;
            getProcessingTimeService().registerTimer(next, this::onWindowTimer);
        }
    }

    private void onWindowTimer(long time) throws Exception {
        if (time != windowTimer) {
            return; // superseded by an earlier timer that already fired these windows
        }
        windowTimer = Long.MAX_VALUE;
        fireUpTo(time);
        scheduleWindowTimer();
    }

    private void schedulePolicy() {
        getProcessingTimeService().registerTimer(now() + options.periodMillis(), this::onPolicyTimer);
    }

    private void onPolicyTimer(long time) throws Exception {
        List<OpenWindow<K, W, ACC>> slow =
                footprints.slowChanged(time, options.slowThresholdMillis(), options.maxWindowsPerShot());
        checkpointWindows(slow);
        schedulePolicy();
    }

    private boolean runsEventualPolicy() {
        return options.mode() == CecMode.EVENTUAL && options.periodMillis() > 0;
    }

    private void onShotTimer(long time) throws Exception {
        // The current time, not the timer's: a late timer has more shots due.
        shoot(now());
        getProcessingTimeService().registerTimer(nextShot, this::onShotTimer);
    }

    /**
     * The shots of the eventual policy due at {@code clock}: each a CHECK for the M slow windows
     * with the oldest footprints, changed or not (the CHECK moves the recovery horizon). With N
     * slow windows a shot is due every T / ceil(N / M), so every slow window is checked within T.
     * A watermark (or a late timer) can pass several due shots at once; they are fired together,
     * at most ceil(N / M), so that the horizon keeps up with the clock.
     */
    private void shoot(long clock) throws IOException {
        long h = options.slowThresholdMillis();
        footprints.promoteSlow(clock < Long.MIN_VALUE + h ? Long.MIN_VALUE : clock - h);
        int max = options.maxWindowsPerShot();
        long shots = Math.max(1, (footprints.slowCount() + max - 1) / max);
        long step = Math.max(1, options.periodMillis() / shots);
        long due = nextShot == Long.MIN_VALUE || clock < nextShot ? 1 : Math.min(shots, 1 + (clock - nextShot) / step);
        checkpointWindows(footprints.oldestSlow((int) Math.min(Integer.MAX_VALUE, due * max)));
        nextShot = clock > Long.MAX_VALUE - step ? Long.MAX_VALUE : clock + step;
    }

    private void checkpointWindows(List<OpenWindow<K, W, ACC>> toCheck) throws IOException {
        if (toCheck.isEmpty()) {
            return;
        }
        long t = stamp(operatorTime());
        long now = now();
        for (OpenWindow<K, W, ACC> window : toCheck) {
            emit(CecRecord.check(
                    window.key, window.window, t, windows.size(), window.count,
                    accumulatorSerializer.copy(window.accumulator)));
            footprints.footprinted(window, now, log.lastRecordPosition());
        }
        checkTuples.inc(toCheck.size());
    }

    /** Appends the tuple to the persisted stream, then forwards it. */
    private void emit(CecRecord<K, W, ACC, OUT> record) throws IOException {
        payload.clear();
        serializer.serialize(record, payload);
        persist(record.getTimestamp());
        output.collect(reuse.replace(record, record.getTimestamp()));
    }

    /** Appends {@link #payload} to the persisted stream, counting the bytes written. */
    private void persist(long timestamp) throws IOException {
        long before = log.bytesWritten();
        log.append(timestamp, payload.getSharedBuffer(), payload.length());
        bytesPersisted.inc(log.bytesWritten() - before);
    }

    /** The stream time never goes backwards, so the persisted stream is ordered by timestamp. */
    private long stamp(long candidate) {
        streamTime = Math.max(streamTime, candidate);
        return streamTime;
    }

    private long operatorTime() {
        return assigner.isEventTime() ? watermark : now();
    }

    private long now() {
        return getProcessingTimeService().getCurrentProcessingTime();
    }

    // ---------------------------------------------------------------------------------------------
    // Flink checkpoints
    // ---------------------------------------------------------------------------------------------

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        long start = System.nanoTime();
        super.prepareSnapshotPreBarrier(checkpointId);
        if (options.mode() == CecMode.BARRIER) {
            // CHECKs go out before the barrier, so downstream sees them on the checkpoint's side.
            List<OpenWindow<K, W, ACC>> changed = footprints.allChanged();
            checkpointWindows(changed);
            barrierCheckTuples.inc(changed.size());
            log.sync();
        } else {
            // Every footprint is in the log already; the asynchronous part makes it durable.
            pendingSyncs.put(checkpointId, log.flushForSync());
        }
        LogPosition end = log.position();
        LogPosition horizon = footprints.horizon();
        pendingCommits.put(
                checkpointId,
                new CheckpointedPosition(
                        subtaskIndex(),
                        getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks(),
                        generation,
                        end,
                        log.sequence(),
                        windows.size(),
                        streamTime,
                        watermark,
                        horizon == null ? end : horizon,
                        logsInput));
        preBarrierNanos = System.nanoTime() - start;
    }

    /** Completes the operator-state snapshot only once the log is durable up to the barrier. */
    @Override
    public OperatorSnapshotFutures snapshotState(
            long checkpointId, long timestamp, CheckpointOptions checkpointOptions, CheckpointStreamFactory factory)
            throws Exception {
        long start = System.nanoTime();
        OperatorSnapshotFutures futures = super.snapshotState(checkpointId, timestamp, checkpointOptions, factory);
        SegmentSync sync = pendingSyncs.remove(checkpointId);
        pendingSyncs.headMap(checkpointId).clear();
        if (sync != null) {
            futures.setOperatorStateManagedFuture(
                    new DurableLogSnapshot(
                            sync, pendingCommits.get(checkpointId).end, futures.getOperatorStateManagedFuture()));
        }
        // The task thread's whole pause for this checkpoint: before the barrier and the synchronous part.
        barrierMicros.update((preBarrierNanos + System.nanoTime() - start) / 1_000);
        preBarrierNanos = 0;
        return futures;
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        CheckpointedPosition position = pendingCommits.get(context.getCheckpointId());
        if (position == null) {
            throw new IllegalStateException(
                    "CEC operator '" + getOperatorName() + "' got no barrier preparation for checkpoint "
                            + context.getCheckpointId());
        }
        positionState.update(Collections.singletonList(position.toBytes()));
        // Handed on to the next restore, which may be at yet another parallelism.
        List<byte[]> adoptedBytes = new ArrayList<>(adopted.size());
        for (AdoptedStream stream : adopted) {
            adoptedBytes.add(stream.position.toBytes());
        }
        adoptedState.update(adoptedBytes);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        CheckpointedPosition position = pendingCommits.get(checkpointId);
        pendingCommits.headMap(checkpointId, true).clear();
        if (position != null) {
            // On the task thread, unlike retention: a failed commit fails the task as readers need, and
            // no commit of this attempt can follow a restore's commit or withdrawal, since the task
            // ends only after this call returned.
            PersistedStream.commit(fs, directory, new CommitMarker(checkpointId, position.end, jobId()));
            List<LogCleaner.Horizon> horizons = new ArrayList<>(1 + adopted.size());
            // What a restore from the completed checkpoint reads starts at the recovery horizon.
            horizons.add(new LogCleaner.Horizon(retention, position.recoveryHorizon()));
            for (AdoptedStream old : adopted) {
                // Aged against this operator's stream time (the request's): the old stream's own time
                // stopped at the rescale.
                horizons.add(new LogCleaner.Horizon(old.retention, old.position.end));
            }
            cleaner.request(checkpointId, position.streamTime, horizons);
        }
    }

    @Override
    public void notifyCheckpointAborted(long checkpointId) throws Exception {
        super.notifyCheckpointAborted(checkpointId);
        pendingCommits.remove(checkpointId);
    }

    @Override
    public void finish() throws Exception {
        super.finish();
        finished = true;
        log.sync();
        if (!finalCheckpointFollows()) {
            // No checkpoint will commit what was written since the last one; the stream is complete at
            // end of input. A late completion of an earlier checkpoint must not commit a shorter stream.
            pendingCommits.clear();
            PersistedStream.commit(fs, directory, new CommitMarker(Long.MAX_VALUE, log.position(), jobId()));
        }
    }

    /**
     * Whether a checkpoint follows {@link #finish()} and commits the rest of the stream: decided as
     * Flink's {@code StreamTask} decides whether to wait for a final checkpoint.
     */
    private boolean finalCheckpointFollows() {
        StreamConfig config = getOperatorConfig();
        return config.isCheckpointingEnabled()
                && config.getConfiguration().get(CheckpointingOptions.ENABLE_CHECKPOINTS_AFTER_TASKS_FINISH);
    }

    @Override
    public void close() throws Exception {
        try {
            if (cleaner != null) {
                if (finished) {
                    cleaner.finish(); // the final checkpoint's retention, as at every other checkpoint
                }
                cleaner.close(); // before a restore of this subtask can begin
            }
        } finally {
            try {
                if (log != null) {
                    log.close();
                }
            } finally {
                super.close();
            }
        }
    }
}
