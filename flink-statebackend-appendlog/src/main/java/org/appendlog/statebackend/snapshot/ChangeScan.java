package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.tracking.EntryRef;
import org.appendlog.statebackend.tracking.LoggedState;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StateEntry;
import org.apache.flink.runtime.state.heap.CopyOnWriteStateMap;
import org.apache.flink.runtime.state.heap.CopyOnWriteStateMapSnapshot;
import org.apache.flink.runtime.state.heap.StateTable;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.Iterator;

/**
 * Finds the entries of one stamped state written since an earlier scan, without a dirty set on the
 * task thread. Flink's copy-on-write state map stamps each entry it writes with the map's version,
 * and every snapshot of the map moves that version on. The synchronous phase takes a snapshot of
 * each key group's map, which copies only its bucket array (copy-on-write keeps the entries as of
 * the barrier from then on); the asynchronous phase writes the entries stamped at or after the
 * versions of the previous scan and releases each key group's snapshot as soon as it is done, so
 * the task copies entries only while the scan runs.
 */
final class ChangeScan {

    final int stateId;
    final StateTable<Object, Object, Object> table;
    private final int firstKeyGroup;
    private final CopyOnWriteStateMapSnapshot<Object, Object, Object>[] snapshots;
    private final int[] versions;
    private final Capture.Serializers serializers;

    @SuppressWarnings("unchecked")
    private ChangeScan(
            LoggedState<?> state, KeyGroupRange keyGroups, TypeSerializer<Object> keySerializer) {
        this.stateId = state.id();
        this.table = (StateTable<Object, Object, Object>) (StateTable<?, ?, ?>) state.table();
        this.firstKeyGroup = keyGroups.getStartKeyGroup();
        int n = keyGroups.getNumberOfKeyGroups();
        this.snapshots = new CopyOnWriteStateMapSnapshot[n];
        this.versions = new int[n];
        for (int i = 0; i < n; i++) {
            snapshots[i] =
                    ((CopyOnWriteStateMap<Object, Object, Object>)
                                    table.getMapForKeyGroup(firstKeyGroup + i))
                            .stateSnapshot();
            versions[i] = CopyOnWriteVersions.snapshotVersion(snapshots[i]);
        }
        this.serializers =
                new Capture.Serializers(
                        keySerializer, table.getNamespaceSerializer(), table.getStateSerializer());
    }

    /** Takes the snapshots of every key group's map; on the task thread, at the barrier. */
    static ChangeScan take(
            LoggedState<?> state, KeyGroupRange keyGroups, TypeSerializer<Object> keySerializer) {
        return new ChangeScan(state, keyGroups, keySerializer);
    }

    /**
     * Adds to {@code capture} every entry stamped at or after {@code since} (per key group; null:
     * every entry), releasing the snapshots as it goes.
     */
    void writeTo(Capture capture, @Nullable int[] since) throws IOException {
        for (int i = 0; i < snapshots.length; i++) {
            int threshold = since == null ? Integer.MIN_VALUE : since[i];
            int keyGroup = firstKeyGroup + i;
            Iterator<StateEntry<Object, Object, Object>> entries =
                    snapshots[i].getIterator(
                            serializers.key, serializers.namespace, serializers.value, null);
            while (entries.hasNext()) {
                StateEntry<Object, Object, Object> entry = entries.next();
                if (CopyOnWriteVersions.stateVersion(entry) >= threshold) {
                    capture.add(
                            new EntryRef(stateId, entry.getKey(), entry.getNamespace(), keyGroup),
                            serializers,
                            entry.getState());
                }
            }
            snapshots[i].release();
        }
    }

    /** Entries written from now on carry these versions or later ones, per key group. */
    int[] versions() {
        return versions;
    }

    void release() {
        for (CopyOnWriteStateMapSnapshot<Object, Object, Object> snapshot : snapshots) {
            snapshot.release();
        }
    }
}
