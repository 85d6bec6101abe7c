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

package org.appendlog.statebackend.index;

import java.util.BitSet;
import java.util.List;

/**
 * The entries that compaction moved into one run, until a completed checkpoint holds the run:
 * should the run be refused or dropped instead (the checkpoint that took it up was aborted or
 * subsumed), its entries go back to the records the pass copied, which are still where they were
 * ({@link #moveBack}). No other pass runs meanwhile, so nothing else moved them.
 */
final class RunMoves {

    final int run;
    private final CompactedBatches pass;
    /** The records the pass copied, and of each list which ones moved their entry. */
    private final List<RecordsToCopy> copied;
    private final BitSet[] moved;

    RunMoves(int run, CompactedBatches pass, List<RecordsToCopy> copied) {
        this.run = run;
        this.pass = pass;
        this.copied = copied;
        this.moved = new BitSet[copied.size()];
        for (int i = 0; i < moved.length; i++) {
            moved[i] = new BitSet();
        }
    }

    /**
     * Moves the entry of record {@code record} of list {@code list} into the run, if its latest
     * record is still that one.
     */
    void move(LogIndex index, int list, int record, RecordAt to) {
        RecordsToCopy records = copied.get(list);
        int batch = records.batch(record);
        if (index.of(records.keyGroup(record))
                .moveIfStillAt(
                        records.entry(record),
                        pass.segment(batch),
                        pass.batch(batch),
                        records.position(record),
                        to.record(records.copyPosition(record), records.length(record)))) {
            moved[list].set(record);
        }
    }

    /**
     * Moves every entry that still points at the run back to the record it was moved from, the
     * latest moves first: should an entry's number have been freed and taken by another entry
     * that moved in later, the later move is the one that stands.
     */
    void moveBack(LogIndex index) {
        RecordAt from = new RecordAt();
        for (int list = copied.size() - 1; list >= 0; list--) {
            RecordsToCopy records = copied.get(list);
            BitSet moves = moved[list];
            for (int i = moves.previousSetBit(records.size() - 1);
                    i >= 0;
                    i = moves.previousSetBit(i - 1)) {
                int batch = records.batch(i);
                from.set(
                        pass.segment(batch),
                        pass.batch(batch),
                        records.position(i),
                        records.length(i));
                index.of(records.keyGroup(i)).moveBack(records.entry(i), run, from);
            }
        }
    }
}
