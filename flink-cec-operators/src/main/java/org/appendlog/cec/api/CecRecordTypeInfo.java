package org.appendlog.cec.api;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;

import java.util.Objects;

/**
 * Type information of {@link CecRecord}. The window type is given by its serializer, as Flink's
 * window assigners provide it ({@code WindowAssigner#getWindowSerializer}).
 */
public final class CecRecordTypeInfo<K, W, ACC, OUT> extends TypeInformation<CecRecord<K, W, ACC, OUT>> {

    private static final long serialVersionUID = 1L;

    private final TypeInformation<K> keyType;
    private final TypeSerializer<W> windowSerializer;
    private final TypeInformation<ACC> accumulatorType;
    private final TypeInformation<OUT> valueType;

    public CecRecordTypeInfo(
            TypeInformation<K> keyType,
            TypeSerializer<W> windowSerializer,
            TypeInformation<ACC> accumulatorType,
            TypeInformation<OUT> valueType) {
        this.keyType = Objects.requireNonNull(keyType);
        this.windowSerializer = Objects.requireNonNull(windowSerializer);
        this.accumulatorType = Objects.requireNonNull(accumulatorType);
        this.valueType = Objects.requireNonNull(valueType);
    }

    public TypeInformation<K> getKeyType() {
        return keyType;
    }

    public TypeInformation<OUT> getValueType() {
        return valueType;
    }

    @Override
    public boolean isBasicType() {
        return false;
    }

    @Override
    public boolean isTupleType() {
        return false;
    }

    @Override
    public int getArity() {
        return 1;
    }

    @Override
    public int getTotalFields() {
        return 1;
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public Class<CecRecord<K, W, ACC, OUT>> getTypeClass() {
        return (Class<CecRecord<K, W, ACC, OUT>>) (Class) CecRecord.class;
    }

    @Override
    public boolean isKeyType() {
        return false;
    }

    /** Typed: the operator needs the nested accumulator serializer. */
    @Override
    public CecRecordSerializer<K, W, ACC, OUT> createSerializer(SerializerConfig config) {
        return new CecRecordSerializer<>(
                keyType.createSerializer(config),
                windowSerializer.duplicate(),
                accumulatorType.createSerializer(config),
                valueType.createSerializer(config));
    }

    @Override
    @Deprecated
    public TypeSerializer<CecRecord<K, W, ACC, OUT>> createSerializer(ExecutionConfig config) {
        return createSerializer(config.getSerializerConfig());
    }

    @Override
    public String toString() {
        return "CecRecord<" + keyType + ", " + windowSerializer.getClass().getSimpleName() + ", "
                + accumulatorType + ", " + valueType + ">";
    }

    @Override
    public boolean equals(Object obj) {
        if (!(obj instanceof CecRecordTypeInfo)) {
            return false;
        }
        CecRecordTypeInfo<?, ?, ?, ?> that = (CecRecordTypeInfo<?, ?, ?, ?>) obj;
        return that.canEqual(this)
                && keyType.equals(that.keyType)
                && windowSerializer.equals(that.windowSerializer)
                && accumulatorType.equals(that.accumulatorType)
                && valueType.equals(that.valueType);
    }

    @Override
    public int hashCode() {
        return Objects.hash(keyType, windowSerializer, accumulatorType, valueType);
    }

    @Override
    public boolean canEqual(Object obj) {
        return obj instanceof CecRecordTypeInfo;
    }
}
