package org.appendlog.statebackend;

import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Passes records through and throws once per test, mid-stream: only after a checkpoint that
 * covers at least {@code recordsBeforeCheckpoint} records of this subtask has completed, and
 * {@code recordsAfterCheckpoint} records later, so the restore has real state to bring back and
 * real records to replay. It counts the records it passed per attempt: those of the attempt after
 * the restore are what the restored sources emitted after the checkpoint.
 */
public class FailOnce extends RichMapFunction<Long, Long>
        implements CheckpointedFunction, CheckpointListener {

    private static final AtomicBoolean FAILED = new AtomicBoolean();
    private static final Map<Integer, LongAdder> PASSED_PER_ATTEMPT = new ConcurrentHashMap<>();

    private final long recordsBeforeCheckpoint;
    private final long recordsAfterCheckpoint;

    private transient long processed;
    private transient Map<Long, Long> processedAtCheckpoint;
    private transient long armedAt;
    private transient LongAdder passedThisAttempt;

    public FailOnce(long recordsBeforeCheckpoint, long recordsAfterCheckpoint) {
        this.recordsBeforeCheckpoint = recordsBeforeCheckpoint;
        this.recordsAfterCheckpoint = recordsAfterCheckpoint;
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {
        processedAtCheckpoint = new HashMap<>();
        armedAt = -1;
        passedThisAttempt =
                PASSED_PER_ATTEMPT.computeIfAbsent(
                        getRuntimeContext().getTaskInfo().getAttemptNumber(), a -> new LongAdder());
    }

    @Override
    public Long map(Long value) {
        processed++;
        if (armedAt >= 0
                && processed >= armedAt + recordsAfterCheckpoint
                && FAILED.compareAndSet(false, true)) {
            throw new IllegalStateException(
                    "Failure injected by the test after " + processed + " records");
        }
        passedThisAttempt.increment();
        return value;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) {
        processedAtCheckpoint.put(context.getCheckpointId(), processed);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        Long covered = processedAtCheckpoint.remove(checkpointId);
        if (armedAt < 0 && covered != null && covered >= recordsBeforeCheckpoint) {
            armedAt = processed;
        }
    }

    static boolean hasFailed() {
        return FAILED.get();
    }

    /** The records that subtasks of attempt {@code attempt} passed on, since the last reset. */
    static long passed(int attempt) {
        LongAdder passed = PASSED_PER_ATTEMPT.get(attempt);
        return passed == null ? 0 : passed.sum();
    }

    static void reset() {
        FAILED.set(false);
        PASSED_PER_ATTEMPT.clear();
    }
}
