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

import org.appendlog.cec.log.PersistedStream;

import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.util.FlinkRuntimeException;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The enumerator of a {@link CecLogSource} that follows the stream: lists the stream's subtask
 * directories every {@link #DISCOVERY_MILLIS} ms (also before the writing job created them) and
 * assigns a following split for each new one to a reader, in turn. The splits never finish.
 */
final class CecLogFollowingEnumerator implements SplitEnumerator<CecLogSplit, CecLogEnumeratorState> {

    /** How often the stream's directory is listed for subtask directories that appeared. */
    static final long DISCOVERY_MILLIS = 500;

    private final SplitEnumeratorContext<CecLogSplit> context;
    private final Path root;
    private final long fromTimestamp;
    private final List<CecLogSplit> unassigned;
    private final Set<String> discovered;
    private int nextReader;

    CecLogFollowingEnumerator(
            SplitEnumeratorContext<CecLogSplit> context,
            Path root,
            long fromTimestamp,
            Collection<CecLogSplit> unassigned,
            Collection<String> discovered) {
        this.context = context;
        this.root = root;
        this.fromTimestamp = fromTimestamp;
        this.unassigned = new ArrayList<>(unassigned);
        this.discovered = new HashSet<>(discovered);
    }

    @Override
    public void start() {
        context.callAsync(this::subtaskDirectories, this::addDirectories, 0, DISCOVERY_MILLIS);
    }

    /** On a worker thread: the subtask directories there are now (none while the root is missing). */
    private List<String> subtaskDirectories() throws IOException {
        FileSystem fs = root.getFileSystem();
        List<String> directories = new ArrayList<>();
        if (fs.exists(root)) {
            for (Path directory : PersistedStream.subtaskDirectories(fs, root)) {
                directories.add(directory.toString());
            }
        }
        return directories;
    }

    private void addDirectories(@Nullable List<String> directories, @Nullable Throwable error) {
        if (error != null) {
            throw new FlinkRuntimeException("Could not list the subtask directories of the CEC stream " + root, error);
        }
        for (String directory : new TreeSet<>(directories)) {
            if (discovered.add(directory)) {
                unassigned.add(new CecLogSplit(directory, null, fromTimestamp, null));
            }
        }
        assignUnassigned();
    }

    private void assignUnassigned() {
        List<Integer> readers = new ArrayList<>(new TreeSet<>(context.registeredReaders().keySet()));
        if (readers.isEmpty()) {
            return;
        }
        for (CecLogSplit split : unassigned) {
            context.assignSplit(split, readers.get(nextReader++ % readers.size()));
        }
        unassigned.clear();
    }

    @Override
    public void handleSplitRequest(int subtaskId, @Nullable String requesterHostname) {
        // Splits are pushed as directories are found; a following reader never runs out of work.
    }

    @Override
    public void addSplitsBack(List<CecLogSplit> splits, int subtaskId) {
        unassigned.addAll(splits);
        assignUnassigned();
    }

    @Override
    public void addReader(int subtaskId) {
        assignUnassigned();
    }

    @Override
    public CecLogEnumeratorState snapshotState(long checkpointId) {
        return new CecLogEnumeratorState(unassigned, discovered);
    }

    @Override
    public void close() {}
}
