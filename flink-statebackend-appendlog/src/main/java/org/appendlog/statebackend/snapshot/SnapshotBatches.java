package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.log.BatchLocation;

import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;

import java.util.List;
import java.util.Set;

/**
 * What a snapshot's asynchronous phase wrote before its manifest: the batches the manifest lists,
 * the segments its handle lists as placeholders, its private files, and the bytes it appended.
 */
final class SnapshotBatches {

    final List<BatchLocation> batches;
    /** Segments the handle lists as placeholders, which the JobManager resolves. */
    final Set<String> placeholders;
    /** Files that belong to this snapshot alone (a savepoint's segment). */
    final List<HandleAndLocalPath> privateState;
    final long appended;

    SnapshotBatches(
            List<BatchLocation> batches,
            Set<String> placeholders,
            List<HandleAndLocalPath> privateState,
            long appended) {
        this.batches = batches;
        this.placeholders = placeholders;
        this.privateState = privateState;
        this.appended = appended;
    }
}
