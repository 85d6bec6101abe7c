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

package org.appendlog.statebackend;

import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.log.HadoopFileSystems;
import org.appendlog.statebackend.log.LocalLogCopy;
import org.appendlog.statebackend.log.LogFileName;
import org.appendlog.statebackend.log.ObjectStoreDetector;
import org.appendlog.statebackend.log.OrphanSweep;
import org.appendlog.statebackend.log.SegmentedLog;
import org.appendlog.statebackend.log.WriterLineage;
import org.appendlog.statebackend.restore.AppendLogRestoreOperation;
import org.appendlog.statebackend.restore.AppendLogRestoreResult;
import org.appendlog.statebackend.restore.RestoreHandles;
import org.appendlog.statebackend.restore.RestoredCheckpoint;
import org.appendlog.statebackend.restore.RestoredStateDescriptors;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.state.AbstractKeyedStateBackendBuilder;
import org.apache.flink.runtime.state.BackendBuildingException;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.LocalSnapshotDirectoryProvider;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.RegisteredPriorityQueueStateBackendMetaInfo;
import org.apache.flink.runtime.state.StateBackend.KeyedStateBackendParameters;
import org.apache.flink.runtime.state.StateSnapshotTransformer.StateSnapshotTransformFactory;
import org.apache.flink.runtime.state.StreamCompressionDecorator;
import org.apache.flink.runtime.state.heap.HeapKeyedStateBackend;
import org.apache.flink.runtime.state.heap.HeapKeyedStateBackendBuilder;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;
import org.apache.flink.util.IOUtils;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.stream.Collectors;

/**
 * Builds an {@link AppendLogKeyedStateBackend}, restoring it from any of:
 *
 * <ul>
 *   <li>append-log checkpoints (CLAIM: later checkpoints build on the restored batches);
 *   <li>native append-log savepoints: checkpoints are full until one completes;
 *   <li>Flink's key-group formats (canonical savepoints of any backend, {@code hashmap}
 *       checkpoints): the heap backend restores them and checkpoints are full until one completes.
 * </ul>
 */
public class AppendLogKeyedStateBackendBuilder<K> extends AbstractKeyedStateBackendBuilder<K> {

    private final AppendLogSettings settings;
    private final JobID jobId;
    private final String operatorIdentifier;
    private final MetricGroup metricGroup;
    private final boolean localBackup;
    /** Where the log's task-local copy goes, with local backup on. */
    @Nullable private final LocalSnapshotDirectoryProvider localDirectories;
    /** The execution graph's id ({@link LogFileName}), or null if it cannot be told. */
    private final String run;

    public AppendLogKeyedStateBackendBuilder(
            KeyedStateBackendParameters<K> parameters,
            AppendLogSettings settings,
            LatencyTrackingStateConfig latencyTracking,
            StreamCompressionDecorator compressionDecorator) {
        super(
                parameters.getKvStateRegistry(),
                parameters.getKeySerializer(),
                parameters.getEnv().getUserCodeClassLoader().asClassLoader(),
                parameters.getNumberOfKeyGroups(),
                parameters.getKeyGroupRange(),
                parameters.getEnv().getExecutionConfig(),
                parameters.getTtlTimeProvider(),
                latencyTracking,
                parameters.getStateHandles(),
                compressionDecorator,
                parameters.getCancelStreamRegistry());
        this.settings = settings;
        this.jobId = parameters.getJobID();
        this.operatorIdentifier = parameters.getOperatorIdentifier();
        this.metricGroup = parameters.getMetricGroup();
        this.run = runOf(parameters.getEnv().getExecutionId());
        LocalRecoveryConfig localRecovery =
                parameters.getEnv().getTaskStateManager().createLocalRecoveryConfig();
        this.localBackup = localRecovery.isLocalBackupEnabled();
        this.localDirectories =
                localBackup ? localRecovery.getLocalStateDirectoryProvider().orElse(null) : null;
    }

    @Override
    public AppendLogKeyedStateBackend<K> build() throws BackendBuildingException {
        List<KeyedStateHandle> handles =
                restoreStateHandles.stream()
                        .filter(Objects::nonNull)
                        .collect(Collectors.toList());
        HeapKeyedStateBackend<K> heap = null;
        SegmentedLog log = null;
        try {
            RestoreHandles restored = RestoreHandles.classify(handles, userCodeClassLoader);
            restored.checkKeySerializer(keySerializerProvider);
            List<StateMetaInfoSnapshot> restoredMeta = restored.mergedMeta(userCodeClassLoader);

            heap =
                    new HeapKeyedStateBackendBuilder<>(
                                    kvStateRegistry,
                                    keySerializerProvider.currentSchemaSerializer(),
                                    userCodeClassLoader,
                                    numberOfKeyGroups,
                                    keyGroupRange,
                                    executionConfig,
                                    ttlTimeProvider,
                                    LatencyTrackingStateConfig.disabled(),
                                    restored.flinkFormat(),
                                    keyGroupCompressionDecorator,
                                    new LocalRecoveryConfig(false, false, null),
                                    new HeapPriorityQueueSetFactory(
                                            keyGroupRange, numberOfKeyGroups, 128),
                                    true,
                                    cancelStreamRegistry)
                            .build();

            Path dir = logDirectory();
            checkWritable(dir);
            UUID backendId = UUID.randomUUID();
            FileSystem fs = dir.getFileSystem();
            boolean objectStore = ObjectStoreDetector.isObjectStore(fs, dir);
            log =
                    new SegmentedLog(
                            fs,
                            dir,
                            LogFileName.prefix(keyGroupRange, run, backendId),
                            settings.segmentSize(),
                            settings.syncMode(),
                            settings.compression(),
                            objectStore || settings.sealEveryBatch(),
                            settings.permissions());
            if (localDirectories != null) {
                log.copyLocally(new LocalLogCopy(localDirectories, backendId));
            }
            LogIndex index = new LogIndex(keyGroupRange);
            AppendLogKeyedStateBackend<K> backend =
                    new AppendLogKeyedStateBackend<>(
                            heap,
                            kvStateRegistry,
                            userCodeClassLoader,
                            executionConfig,
                            ttlTimeProvider,
                            latencyTrackingStateConfig,
                            keyGroupCompressionDecorator,
                            log,
                            index,
                            backendId,
                            settings.compaction(),
                            settings.changeBufferSize(),
                            settings.fullCheckpointRatio(),
                            localBackup,
                            metricGroup);
            List<KeyGroupedInternalPriorityQueue<?>> queues = registerRestored(backend, restoredMeta);

            AppendLogRestoreResult result =
                    new AppendLogRestoreOperation<>(
                                    restored,
                                    keyGroupRange,
                                    numberOfKeyGroups,
                                    backend.statesByName(),
                                    restoredMeta,
                                    queues,
                                    backend.getKeySerializer(),
                                    log,
                                    index,
                                    settings.restoreParallelism())
                            .restore();
            backend.startFrom(result);
            sweepOrphans(log, dir, backendId, handles, restored);
            logger.info(
                    "Built appendlog keyed state backend for key groups {}, log {}{}, restored from {} handle(s)",
                    keyGroupRange,
                    dir,
                    log.sealsEveryBatch() ? " (every batch sealed in a segment of its own)" : "",
                    handles.size());
            return backend;
        } catch (BackendBuildingException e) {
            closeAll(heap, log);
            throw e;
        } catch (Exception e) {
            closeAll(heap, log);
            StringBuilder message =
                    new StringBuilder("Failed to build the appendlog state backend: ")
                            .append(e.getMessage());
            for (Throwable context : e.getSuppressed()) {
                message.append(" (").append(context.getMessage()).append(')');
            }
            throw new BackendBuildingException(message.toString(), e);
        }
    }

    /**
     * Continues the restored checkpoint's writer lineage and starts the sweep of what crashed
     * attempts of this run left ({@link OrphanSweep}). Only a restore of at most one handle of this
     * backend's own key groups can tell: after a rescale, a restore of another format or with no
     * known run, nothing is swept.
     */
    private void sweepOrphans(
            SegmentedLog log,
            Path dir,
            UUID backendId,
            List<KeyedStateHandle> handles,
            RestoreHandles restoreHandles)
            throws IOException {
        List<RestoredCheckpoint> checkpoints = restoreHandles.checkpoints();
        RestoredCheckpoint restored = checkpoints.size() == 1 ? checkpoints.get(0) : null;
        WriterLineage lineage = restored == null ? WriterLineage.NONE : restored.manifest().lineage();
        log.continueLineage(lineage.forRun(run));
        boolean ownKeyGroups =
                handles.isEmpty()
                        || (restored != null
                                && handles.get(0).getKeyGroupRange().equals(keyGroupRange));
        if (run == null || !restoreHandles.flinkFormat().isEmpty() || !ownKeyGroups) {
            return;
        }
        log.sweepOrphans(
                new OrphanSweep(
                        dir.getFileSystem(),
                        dir,
                        keyGroupRange,
                        run,
                        backendId,
                        lineage,
                        restored == null
                                ? null
                                : ((IncrementalRemoteKeyedStateHandle) handles.get(0))
                                        .getBackendIdentifier(),
                        restored == null
                                ? Collections.emptySet()
                                : restored.segments().keySet()));
    }

    /**
     * The id of the attempt's execution graph, shared by all attempts of a job run; Flink shows it
     * only as the first part of the attempt id's string form.
     */
    private static String runOf(ExecutionAttemptID attempt) {
        String id = String.valueOf(attempt);
        int end = id.indexOf('_');
        String run = end < 0 ? "" : id.substring(0, end);
        return run.matches("[0-9a-f]{32}") ? run : null;
    }

    private static void closeAll(HeapKeyedStateBackend<?> heap, SegmentedLog log) {
        if (heap != null) {
            heap.dispose();
        }
        IOUtils.closeQuietly(log);
    }

    /**
     * Fails now, naming the option, rather than at the first checkpoint. The directory is made on
     * a thread of its own, not the task's: file systems can leave thread-locals on the thread that
     * calls them, and one more entry in the task thread's table can push aside the one Flink reads
     * for every string it deserializes ({@code StringValue}'s buffer), making every such read miss.
     */
    private void checkWritable(Path dir) throws BackendBuildingException {
        IOException cause = null;
        boolean created = false;
        try {
            FutureTask<Boolean> mkdirs =
                    new FutureTask<>(
                            () -> settings.permissions().mkdirs(dir.getFileSystem(), dir));
            Thread thread = new Thread(mkdirs, "appendlog-mkdirs");
            thread.setDaemon(true);
            thread.start();
            created = mkdirs.get();
        } catch (ExecutionException e) {
            cause =
                    e.getCause() instanceof IOException
                            ? (IOException) e.getCause()
                            : new IOException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            cause = new InterruptedIOException("interrupted while creating " + dir);
        }
        if (!created) {
            throw new BackendBuildingException(
                    "Cannot create the state log directory "
                            + dir
                            + "; check that '"
                            + AppendLogOptions.LOG_DIR.key()
                            + "' ("
                            + settings.logDirectory()
                            + ") names a directory that "
                            + user(dir)
                            + " may write"
                            + (cause == null ? "" : ": " + cause.getMessage()),
                    cause);
        }
    }

    /** Who the file system of {@code dir} acts as, for the error: a Kerberos principal on HDFS. */
    private static String user(Path dir) {
        try {
            return HadoopFileSystems.userOf(dir.getFileSystem());
        } catch (IOException | RuntimeException e) {
            return "the job's user";
        }
    }

    private Path logDirectory() {
        String operator = operatorIdentifier.replaceAll("[^A-Za-z0-9_.-]", "_");
        return new Path(new Path(settings.logDirectory(), jobId.toHexString()), operator);
    }

    /**
     * Registers every restored state so that it exists before the job registers it, receives the
     * log's records, and is part of the next checkpoint even if the job never touches it. Returns
     * the priority queues in the order of {@code meta}.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static <K> List<KeyGroupedInternalPriorityQueue<?>> registerRestored(
            AppendLogKeyedStateBackend<K> backend, List<StateMetaInfoSnapshot> meta)
            throws Exception {
        List<KeyGroupedInternalPriorityQueue<?>> queues = new ArrayList<>();
        for (StateMetaInfoSnapshot snapshot : meta) {
            if (snapshot.getBackendStateType()
                    == StateMetaInfoSnapshot.BackendStateType.KEY_VALUE) {
                RegisteredKeyValueStateBackendMetaInfo<?, ?> info =
                        new RegisteredKeyValueStateBackendMetaInfo<>(snapshot);
                backend.createOrUpdateInternalState(
                        (TypeSerializer) info.getNamespaceSerializer(),
                        (org.apache.flink.api.common.state.StateDescriptor)
                                RestoredStateDescriptors.of(info),
                        StateSnapshotTransformFactory.noTransform(),
                        true);
            } else if (snapshot.getBackendStateType()
                    == StateMetaInfoSnapshot.BackendStateType.PRIORITY_QUEUE) {
                RegisteredPriorityQueueStateBackendMetaInfo<?> info =
                        new RegisteredPriorityQueueStateBackendMetaInfo<>(snapshot);
                queues.add(
                        backend.create(
                                info.getName(), (TypeSerializer) info.getElementSerializer(), true));
            }
        }
        return queues;
    }
}
