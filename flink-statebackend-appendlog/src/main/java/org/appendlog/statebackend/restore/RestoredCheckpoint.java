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

package org.appendlog.statebackend.restore;

import org.appendlog.statebackend.log.LogScanner;
import org.appendlog.statebackend.snapshot.CheckpointManifest;

import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;

/**
 * One restored checkpoint handle of the append-log backend: its manifest, its segments, and the
 * key groups it speaks for.
 */
public final class RestoredCheckpoint {

    final CheckpointManifest manifest;
    final Map<String, StreamStateHandle> segments;
    /**
     * The key groups of the subtask that wrote the handle. Its batches may hold other key groups
     * too (written before a rescale), which that subtask never updated: only the handle of their
     * own subtask knows their state.
     */
    final KeyGroupRange keyGroups;

    private RestoredCheckpoint(
            CheckpointManifest manifest,
            Map<String, StreamStateHandle> segments,
            KeyGroupRange keyGroups) {
        this.manifest = manifest;
        this.segments = segments;
        this.keyGroups = keyGroups;
    }

    public CheckpointManifest manifest() {
        return manifest;
    }

    public Map<String, StreamStateHandle> segments() {
        return segments;
    }

    /**
     * Whether this handle alone does not speak for every key group of {@code owned} (several
     * handles merged, or a subtask that had no state): the batches it lists may then hold stale
     * records of {@code owned}'s other key groups, which no later checkpoint may list as its own.
     */
    public boolean isPartialFor(KeyGroupRange owned) {
        return !keyGroups.getIntersection(owned).equals(owned);
    }

    /** True if the handle's meta data stream is an append-log manifest. */
    public static boolean isAppendLog(IncrementalRemoteKeyedStateHandle handle) throws IOException {
        try (InputStream in = handle.getMetaDataStateHandle().openInputStream()) {
            return CheckpointManifest.startsWithMagic(new DataInputViewStreamWrapper(in));
        } catch (EOFException e) {
            return false;
        }
    }

    public static RestoredCheckpoint read(
            IncrementalRemoteKeyedStateHandle handle, ClassLoader classLoader) throws IOException {
        StreamStateHandle metadata = handle.getMetaDataStateHandle();
        byte[] bytes;
        // As many bytes as the file holds, whatever its lengths say.
        try (InputStream in = metadata.openInputStream()) {
            bytes = in.readAllBytes();
        }
        CheckpointManifest manifest =
                CheckpointManifest.read(bytes, LogScanner.describe(metadata), classLoader);
        Map<String, StreamStateHandle> segments = new HashMap<>();
        for (HandleAndLocalPath h : handle.getSharedState()) {
            segments.put(h.getLocalPath(), h.getHandle());
        }
        for (HandleAndLocalPath h : handle.getPrivateState()) {
            segments.put(h.getLocalPath(), h.getHandle());
        }
        return new RestoredCheckpoint(manifest, segments, handle.getKeyGroupRange());
    }
}
