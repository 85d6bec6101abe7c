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

package org.appendlog.cec.operator;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import java.io.IOException;

/**
 * An INPUT record of the persisted stream: one element of the operator's input, logged after the
 * OPENs it causes and before it is added to its windows, so that recovery can replay it (the
 * upstream backup that eventual and open-only mode keep in the same log). It is internal: not a
 * {@link org.appendlog.cec.api.CecRecord}, never forwarded, skipped by every reader of tuples.
 *
 * <p>Payload: {@link #CODE} (1 byte), element timestamp (8), processing time of the window
 * assignment (8), key, element.
 */
public final class LoggedInput<K, IN> {

    /** First payload byte of an INPUT record; tuples start with their kind's code (0 to 2). */
    static final byte CODE = (byte) 0x7F;

    private final TypeSerializer<K> keySerializer;
    private final TypeSerializer<IN> elementSerializer;
    private final DataInputDeserializer in = new DataInputDeserializer();

    K key;
    IN element;
    long timestamp;
    long processingTime;

    LoggedInput(TypeSerializer<K> keySerializer, TypeSerializer<IN> elementSerializer) {
        this.keySerializer = keySerializer;
        this.elementSerializer = elementSerializer;
    }

    /** Whether a log record's payload is an INPUT record rather than a tuple. */
    public static boolean isInput(byte[] payload) {
        return payload.length > 0 && payload[0] == CODE;
    }

    void write(K key, IN element, long timestamp, long processingTime, DataOutputSerializer out)
            throws IOException {
        out.writeByte(CODE);
        out.writeLong(timestamp);
        out.writeLong(processingTime);
        keySerializer.serialize(key, out);
        elementSerializer.serialize(element, out);
    }

    /** Reads an INPUT record's payload into this object's fields. */
    void read(byte[] payload) throws IOException {
        in.setBuffer(payload);
        in.readByte();
        timestamp = in.readLong();
        processingTime = in.readLong();
        key = keySerializer.deserialize(in);
        element = elementSerializer.deserialize(in);
    }
}
