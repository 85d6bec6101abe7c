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

import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchCompression;
import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.LogScanner;
import org.appendlog.statebackend.log.LogScanner.Batch;
import org.appendlog.statebackend.log.RecordCursor;
import org.appendlog.statebackend.log.RecordFormat;

import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Restore visits each key group's records newest first: by checkpoint id, and within one
 * checkpoint id the one read later first, whatever order the batches hold their records in (a
 * compaction run holds records of many checkpoints).
 */
class SliceRecordsTest {

    private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 5);

    @TempDir File dir;

    @Test
    void visitsEachKeyGroupsRecordsNewestFirst() throws Exception {
        Random random = new Random(17);
        List<BatchBuilder> builders = new ArrayList<>();
        for (int b = 0; b < 4; b++) {
            // Batch 1 is like a run: records of 60 checkpoints, in no order.
            BatchBuilder batch = new BatchBuilder(100 + b, RANGE, List.of("s"));
            for (int i = 0; i < 3_000; i++) {
                long checkpointId = b == 1 ? 1 + random.nextInt(60) : 50 + 10 * b + random.nextInt(2);
                byte[] key = ("k" + random.nextInt(500)).getBytes(StandardCharsets.UTF_8);
                byte[] value = ("b" + b + "#" + i).getBytes(StandardCharsets.UTF_8);
                RecordFormat.write(batch, random.nextInt(6), checkpointId, 0, key, 0, key.length, value, 0, value.length);
            }
            builders.add(batch);
        }
        List<Batch> batches = written(builders);

        SliceRecords records = new SliceRecords(KeyGroupRange.of(1, 4));
        List<String[]> forward = new ArrayList<>();
        RecordCursor cursor = new RecordCursor();
        LogScanner.read(
                batches,
                KeyGroupRange.of(1, 4),
                LogScanner.ReadGate.NONE,
                (batch, kg, keyGroupRecords) -> {
                    records.add(batch, kg, keyGroupRecords);
                    cursor.reset(keyGroupRecords);
                    while (cursor.next()) {
                        forward.add(describe(kg, cursor));
                    }
                });

        for (int kg = 1; kg <= 4; kg++) {
            int keyGroup = kg;
            List<String[]> expected = new ArrayList<>();
            for (int seq = forward.size() - 1; seq >= 0; seq--) {
                if (forward.get(seq)[0].equals(String.valueOf(kg))) {
                    expected.add(forward.get(seq));
                }
            }
            // Stable: among equal checkpoint ids, the reversed read order stays.
            expected.sort(Comparator.comparingLong((String[] r) -> -Long.parseLong(r[1])));
            List<String[]> visited = new ArrayList<>();
            records.visitNewestFirst(kg, (batch, record) -> visited.add(describe(keyGroup, record)));
            assertThat(visited).hasSizeGreaterThan(1_500);
            assertThat(visited).usingElementComparator(Comparator.comparing(Arrays::toString))
                    .containsExactlyElementsOf(expected);
            // Visiting lets go of the key group's records.
            List<String[]> again = new ArrayList<>();
            records.visitNewestFirst(kg, (batch, record) -> again.add(describe(keyGroup, record)));
            assertThat(again).isEmpty();
        }
    }

    private static String[] describe(int keyGroup, RecordCursor record) {
        byte[] bytes = record.bytes();
        return new String[] {
            String.valueOf(keyGroup),
            String.valueOf(record.checkpointId()),
            new String(bytes, record.keyOffset(), record.keyLength(), StandardCharsets.UTF_8),
            new String(bytes, record.valueOffset(), record.valueLength(), StandardCharsets.UTF_8),
            record.position()
        };
    }

    private List<Batch> written(List<BatchBuilder> builders) throws Exception {
        File file = new File(dir, "segment");
        List<BatchLocation> locations = new ArrayList<>();
        try (OutputStream out = new FileOutputStream(file)) {
            byte[] header = BatchFormat.segmentHeader();
            out.write(header);
            long position = header.length;
            for (BatchBuilder builder : builders) {
                BatchLocation location = BatchFormat.write(
                                out, "segment", position, builder, BatchCompression.NONE);
                locations.add(location);
                position += location.length();
            }
        }
        FileStateHandle handle = new FileStateHandle(new Path(file.toURI()), file.length());
        return LogScanner.openBatches(locations, segment -> handle);
    }
}
