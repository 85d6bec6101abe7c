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

package org.appendlog.cec.api;

import org.apache.flink.api.common.typeutils.CompositeTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

import java.io.IOException;
import java.util.Objects;

/**
 * Serializes a {@link CecRecord} with the key, window, accumulator and result serializers of its
 * operator. The same bytes travel over Flink's network and form the payload of a record in the
 * persisted stream, so the log and the live stream can never disagree on the format.
 *
 * <p>Layout: kind (1 byte), timestamp (8), n (4), count (8), key, window, then the accumulator
 * for CHECK or the value for RESULT.
 */
public final class CecRecordSerializer<K, W, ACC, OUT> extends TypeSerializer<CecRecord<K, W, ACC, OUT>> {

    private static final long serialVersionUID = 1L;

    private final TypeSerializer<K> keySerializer;
    private final TypeSerializer<W> windowSerializer;
    private final TypeSerializer<ACC> accumulatorSerializer;
    private final TypeSerializer<OUT> valueSerializer;

    public CecRecordSerializer(
            TypeSerializer<K> keySerializer,
            TypeSerializer<W> windowSerializer,
            TypeSerializer<ACC> accumulatorSerializer,
            TypeSerializer<OUT> valueSerializer) {
        this.keySerializer = Objects.requireNonNull(keySerializer);
        this.windowSerializer = Objects.requireNonNull(windowSerializer);
        this.accumulatorSerializer = Objects.requireNonNull(accumulatorSerializer);
        this.valueSerializer = Objects.requireNonNull(valueSerializer);
    }

    public TypeSerializer<K> getKeySerializer() {
        return keySerializer;
    }

    public TypeSerializer<W> getWindowSerializer() {
        return windowSerializer;
    }

    public TypeSerializer<ACC> getAccumulatorSerializer() {
        return accumulatorSerializer;
    }

    public TypeSerializer<OUT> getValueSerializer() {
        return valueSerializer;
    }

    @Override
    public boolean isImmutableType() {
        return false;
    }

    @Override
    public TypeSerializer<CecRecord<K, W, ACC, OUT>> duplicate() {
        TypeSerializer<K> k = keySerializer.duplicate();
        TypeSerializer<W> w = windowSerializer.duplicate();
        TypeSerializer<ACC> a = accumulatorSerializer.duplicate();
        TypeSerializer<OUT> v = valueSerializer.duplicate();
        if (k == keySerializer && w == windowSerializer && a == accumulatorSerializer && v == valueSerializer) {
            return this;
        }
        return new CecRecordSerializer<>(k, w, a, v);
    }

    @Override
    public CecRecord<K, W, ACC, OUT> createInstance() {
        return CecRecord.open(keySerializer.createInstance(), windowSerializer.createInstance(), 0L, 0);
    }

    @Override
    public CecRecord<K, W, ACC, OUT> copy(CecRecord<K, W, ACC, OUT> from) {
        return new CecRecord<>(
                from.getKind(),
                keySerializer.copy(from.getKey()),
                windowSerializer.copy(from.getWindow()),
                from.getTimestamp(),
                from.getOpenWindows(),
                from.getCount(),
                from.getAccumulator() == null ? null : accumulatorSerializer.copy(from.getAccumulator()),
                from.getValue() == null ? null : valueSerializer.copy(from.getValue()));
    }

    @Override
    public CecRecord<K, W, ACC, OUT> copy(CecRecord<K, W, ACC, OUT> from, CecRecord<K, W, ACC, OUT> reuse) {
        return copy(from);
    }

    @Override
    public int getLength() {
        return -1;
    }

    @Override
    public void serialize(CecRecord<K, W, ACC, OUT> record, DataOutputView target) throws IOException {
        target.writeByte(record.getKind().code());
        target.writeLong(record.getTimestamp());
        target.writeInt(record.getOpenWindows());
        target.writeLong(record.getCount());
        keySerializer.serialize(record.getKey(), target);
        windowSerializer.serialize(record.getWindow(), target);
        switch (record.getKind()) {
            case CHECK:
                accumulatorSerializer.serialize(record.getAccumulator(), target);
                break;
            case RESULT:
                valueSerializer.serialize(record.getValue(), target);
                break;
            default:
                break;
        }
    }

    @Override
    public CecRecord<K, W, ACC, OUT> deserialize(DataInputView source) throws IOException {
        CecRecordKind kind = CecRecordKind.ofCode(source.readByte());
        long timestamp = source.readLong();
        int n = source.readInt();
        long count = source.readLong();
        K key = keySerializer.deserialize(source);
        W window = windowSerializer.deserialize(source);
        ACC acc = kind == CecRecordKind.CHECK ? accumulatorSerializer.deserialize(source) : null;
        OUT value = kind == CecRecordKind.RESULT ? valueSerializer.deserialize(source) : null;
        return new CecRecord<>(kind, key, window, timestamp, n, count, acc, value);
    }

    @Override
    public CecRecord<K, W, ACC, OUT> deserialize(CecRecord<K, W, ACC, OUT> reuse, DataInputView source)
            throws IOException {
        return deserialize(source);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        serialize(deserialize(source), target);
    }

    @Override
    public boolean equals(Object obj) {
        if (!(obj instanceof CecRecordSerializer)) {
            return false;
        }
        CecRecordSerializer<?, ?, ?, ?> that = (CecRecordSerializer<?, ?, ?, ?>) obj;
        return keySerializer.equals(that.keySerializer)
                && windowSerializer.equals(that.windowSerializer)
                && accumulatorSerializer.equals(that.accumulatorSerializer)
                && valueSerializer.equals(that.valueSerializer);
    }

    @Override
    public int hashCode() {
        return Objects.hash(keySerializer, windowSerializer, accumulatorSerializer, valueSerializer);
    }

    @Override
    public TypeSerializerSnapshot<CecRecord<K, W, ACC, OUT>> snapshotConfiguration() {
        return new Snapshot<>(this);
    }

    /** Snapshot composed of the four nested serializers' snapshots. */
    public static final class Snapshot<K, W, ACC, OUT>
            extends CompositeTypeSerializerSnapshot<CecRecord<K, W, ACC, OUT>, CecRecordSerializer<K, W, ACC, OUT>> {

        public Snapshot() {}

        Snapshot(CecRecordSerializer<K, W, ACC, OUT> serializer) {
            super(serializer);
        }

        @Override
        protected int getCurrentOuterSnapshotVersion() {
            return 1;
        }

        @Override
        protected TypeSerializer<?>[] getNestedSerializers(CecRecordSerializer<K, W, ACC, OUT> outer) {
            return new TypeSerializer<?>[] {
                outer.keySerializer, outer.windowSerializer, outer.accumulatorSerializer, outer.valueSerializer
            };
        }

        @Override
        @SuppressWarnings("unchecked")
        protected CecRecordSerializer<K, W, ACC, OUT> createOuterSerializerWithNestedSerializers(
                TypeSerializer<?>[] nested) {
            return new CecRecordSerializer<>(
                    (TypeSerializer<K>) nested[0],
                    (TypeSerializer<W>) nested[1],
                    (TypeSerializer<ACC>) nested[2],
                    (TypeSerializer<OUT>) nested[3]);
        }
    }
}
