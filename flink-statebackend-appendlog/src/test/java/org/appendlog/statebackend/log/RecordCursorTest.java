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

package org.appendlog.statebackend.log;

import org.apache.flink.core.memory.DataOutputSerializer;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Records written by {@link RecordFormat#write} and read back in place. */
class RecordCursorTest {

    private static final byte[] KEY = "key-and-namespace".getBytes(StandardCharsets.UTF_8);

    @Test
    void readsEveryFieldWhereItLies() throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(64);
        out.write(new byte[] {9, 9, 9}); // bytes before the records: offsets are absolute
        byte[] value = new byte[300]; // a two-byte length
        Arrays.fill(value, (byte) 7);
        int first =
                RecordFormat.write(to(out), 0, 1L << 40, 2, KEY, 0, KEY.length, value, 0, value.length);
        int second = RecordFormat.write(to(out), 0, 5, 0, KEY, 4, 3, null, 0, 0);
        int third = RecordFormat.write(to(out), 0, 6, 130, KEY, 0, 1, value, 0, 0);
        byte[] bytes = out.getCopyOfBuffer();

        KeyGroupRecords records = KeyGroupRecords.stored(bytes, 3, bytes.length - 3, "f", 1000);
        RecordCursor cursor = new RecordCursor().reset(records);
        assertThat(cursor.next()).isTrue();
        assertThat(cursor.offset()).isEqualTo(3);
        assertThat(cursor.position()).isEqualTo("offset 1000");
        assertThat(cursor.encodedLength()).isEqualTo(first);
        assertThat(cursor.checkpointId()).isEqualTo(1L << 40);
        assertThat(cursor.stateId()).isEqualTo(2);
        assertThat(slice(bytes, cursor.keyOffset(), cursor.keyLength())).isEqualTo(KEY);
        assertThat(cursor.isTombstone()).isFalse();
        assertThat(slice(bytes, cursor.valueOffset(), cursor.valueLength())).isEqualTo(value);

        assertThat(cursor.next()).isTrue();
        assertThat(cursor.position()).isEqualTo("offset " + (1000 + first));
        assertThat(cursor.encodedLength()).isEqualTo(second);
        assertThat(cursor.checkpointId()).isEqualTo(5);
        assertThat(slice(bytes, cursor.keyOffset(), cursor.keyLength())).isEqualTo(slice(KEY, 4, 3));
        assertThat(cursor.isTombstone()).isTrue();
        assertThat(cursor.valueLength()).isEqualTo(-1);

        assertThat(cursor.next()).isTrue();
        assertThat(cursor.encodedLength()).isEqualTo(third);
        assertThat(cursor.stateId()).isEqualTo(130);
        assertThat(cursor.isTombstone()).isFalse();
        assertThat(cursor.valueLength()).isZero();
        assertThat(cursor.offset() + third).isEqualTo(bytes.length);

        assertThat(cursor.next()).isFalse();

        // A cursor is reused: positioned on the second record directly.
        cursor.reset(records, 3 + first);
        assertThat(cursor.next()).isTrue();
        assertThat(cursor.checkpointId()).isEqualTo(5);
        assertThat(cursor.position()).isEqualTo("offset " + (1000 + first));
    }

    /**
     * A cut-off record is named by its file offset; one decompressed from an LZ4 block by the
     * block's file offset and its place among the block's uncompressed bytes.
     */
    @Test
    void aCutOffRecordNamesTheFileAndWhereItIs() throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(64);
        int first = RecordFormat.write(to(out), 0, 1, 0, KEY, 0, KEY.length, KEY, 0, KEY.length);
        RecordFormat.write(to(out), 0, 2, 0, KEY, 0, KEY.length, KEY, 0, KEY.length);
        byte[] bytes = out.getCopyOfBuffer();
        int cut = bytes.length - 2;

        RecordCursor cursor =
                new RecordCursor().reset(KeyGroupRecords.stored(bytes, 0, cut, "seg-7", 500));
        assertThat(cursor.next()).isTrue();
        assertThatThrownBy(cursor::next)
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("seg-7 at offset " + (500 + first) + ": unreadable record");

        cursor.reset(KeyGroupRecords.decompressed(bytes, 0, cut, "seg-8", 700));
        assertThat(cursor.next()).isTrue();
        assertThatThrownBy(cursor::next)
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(
                        "seg-8 at offset 700 (an LZ4 block: the record starts at byte "
                                + first + " of its " + cut + " uncompressed bytes): unreadable record");
    }

    @Test
    void anImpossibleKeyLengthIsCorruptNotALoop() {
        // checkpoint 1, state 0, key length 2^35: more than any array holds.
        byte[] bytes = {1, 0, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 1};
        RecordCursor cursor =
                new RecordCursor().reset(KeyGroupRecords.stored(bytes, 0, bytes.length, "seg", 0));
        assertThatThrownBy(cursor::next)
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("impossible length");
    }

    /** {@code out} as the target of every record, whatever its key group. */
    private static RecordFormat.Target to(DataOutputSerializer out) {
        return (keyGroup, checkpointId) -> out;
    }

    private static byte[] slice(byte[] bytes, int offset, int length) {
        return Arrays.copyOfRange(bytes, offset, offset + length);
    }
}
