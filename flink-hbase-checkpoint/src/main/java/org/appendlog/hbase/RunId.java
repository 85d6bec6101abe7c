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

package org.appendlog.hbase;

import org.apache.flink.runtime.state.CheckpointStorageLocationReference;

import javax.annotation.Nullable;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * The run of a job's checkpoints: a random id drawn when Flink creates the job's storage access,
 * part of every checkpoint directory and pointer of the run ({@code <job-id>/run-<16 hex
 * digits>/chk-<n>}).
 *
 * <p>The job id alone does not tell runs apart: application mode with high availability derives
 * it from the cluster id, so a new deployment that does not restore numbers its checkpoints from 1
 * again under the job id of the one before. With the run in the key, it never writes, replaces or
 * deletes a row of the checkpoints that run retained. A job manager that fails over creates a new
 * access and so a new run; the checkpoints it reads back from the high-availability store keep the
 * directories their locations name, and are deleted through them when subsumed.
 *
 * <p>Tasks learn the run from the location reference that Flink sends with the checkpoint barrier.
 */
final class RunId {

    /** As it appears in row keys and pointers. */
    static final String REGEX = "run-[0-9a-f]{16}";

    private static final Pattern PATTERN = Pattern.compile(REGEX);

    /** Distinct from the magic number of Flink's file system references (savepoint paths). */
    private static final byte[] REFERENCE_PREFIX =
            "appendlog-hbase-run:".getBytes(StandardCharsets.US_ASCII);

    private static final SecureRandom RANDOM = new SecureRandom();

    private RunId() {}

    static String random() {
        return String.format("run-%016x", RANDOM.nextLong());
    }

    /** The reference that brings the run to the tasks. */
    static CheckpointStorageLocationReference reference(String run) {
        byte[] name = run.getBytes(StandardCharsets.US_ASCII);
        byte[] bytes = Arrays.copyOf(REFERENCE_PREFIX, REFERENCE_PREFIX.length + name.length);
        System.arraycopy(name, 0, bytes, REFERENCE_PREFIX.length, name.length);
        return new CheckpointStorageLocationReference(bytes);
    }

    /** The run a reference made by {@link #reference} names, or null for any other reference. */
    @Nullable
    static String fromReference(CheckpointStorageLocationReference reference) {
        if (reference.isDefaultReference()) {
            return null;
        }
        byte[] bytes = reference.getReferenceBytes();
        if (bytes.length < REFERENCE_PREFIX.length
                || !Arrays.equals(
                        REFERENCE_PREFIX, Arrays.copyOf(bytes, REFERENCE_PREFIX.length))) {
            return null;
        }
        String run =
                new String(
                        bytes,
                        REFERENCE_PREFIX.length,
                        bytes.length - REFERENCE_PREFIX.length,
                        StandardCharsets.US_ASCII);
        if (!PATTERN.matcher(run).matches()) {
            throw new IllegalArgumentException(
                    "Checkpoint location reference names no valid run: '" + run + "'");
        }
        return run;
    }
}
