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
import org.appendlog.statebackend.snapshot.LocalCopyHandle;

import org.apache.flink.core.fs.Path;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;

/**
 * One restored checkpoint handle of the append-log backend: its manifest, its segments, their
 * task-local copies (a {@link LocalCopyHandle}'s), and the key groups it speaks for.
 */
public final class RestoredCheckpoint {

    final CheckpointManifest manifest;
    final Map<String, StreamStateHandle> segments;
    /** Task-local copies of segments, read instead of them. */
    final Map<String, File> localCopies;
    /**
     * The key groups of the subtask that wrote the handle. Its batches may hold other key groups
     * too (written before a rescale), which that subtask never updated: only the handle of their
     * own subtask knows their state.
     */
    final KeyGroupRange keyGroups;

    private RestoredCheckpoint(
            CheckpointManifest manifest,
            Map<String, StreamStateHandle> segments,
            Map<String, File> localCopies,
            KeyGroupRange keyGroups) {
        this.manifest = manifest;
        this.segments = segments;
        this.localCopies = localCopies;
        this.keyGroups = keyGroups;
    }

    public CheckpointManifest manifest() {
        return manifest;
    }

    /** The segments by name, under the handles the checkpoints registered. */
    public Map<String, StreamStateHandle> segments() {
        return segments;
    }

    /** The task-local copies of segments, by name. */
    public Map<String, File> localCopies() {
        return localCopies;
    }

    /** Where the restore reads {@code segment}: its task-local copy, if it has one. */
    StreamStateHandle readFrom(String segment) {
        File copy = localCopies.get(segment);
        return copy == null
                ? segments.get(segment)
                : new FileStateHandle(new Path(copy.toURI()), copy.length());
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
        return new RestoredCheckpoint(
                manifest, segments, localCopies(handle, segments), handle.getKeyGroupRange());
    }

    /**
     * The copies a {@link LocalCopyHandle} names that hold at least what the checkpoint's handle
     * of the segment does (a shorter one was cut off, and is not read).
     */
    private static Map<String, File> localCopies(
            IncrementalRemoteKeyedStateHandle handle, Map<String, StreamStateHandle> segments) {
        File dir = handle instanceof LocalCopyHandle ? ((LocalCopyHandle) handle).copies() : null;
        Map<String, File> copies = new HashMap<>();
        if (dir == null) {
            return copies;
        }
        for (Map.Entry<String, StreamStateHandle> segment : segments.entrySet()) {
            File copy = new File(dir, segment.getKey());
            if (copy.isFile() && copy.length() >= segment.getValue().getStateSize()) {
                copies.put(segment.getKey(), copy);
            }
        }
        return copies;
    }
}
