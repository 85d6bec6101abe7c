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

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.Window;

import java.util.Objects;

/**
 * Type information of {@link CecRecord}. The window type is given by the window assigner, which
 * builds the window serializer from an {@code ExecutionConfig} ({@code
 * WindowAssigner#getWindowSerializer}); like the other serializers it is built from the config of
 * the job that serializes, so configuration made after {@code aggregate()} counts.
 */
public final class CecRecordTypeInfo<K, W extends Window, ACC, OUT> extends TypeInformation<CecRecord<K, W, ACC, OUT>> {

    private static final long serialVersionUID = 1L;

    private final TypeInformation<K> keyType;
    private final WindowAssigner<?, W> assigner;
    /** Names the window type (equals, hashCode, toString); serializers come from the job's config. */
    private final TypeSerializer<W> windowType;
    private final TypeInformation<ACC> accumulatorType;
    private final TypeInformation<OUT> valueType;

    public CecRecordTypeInfo(
            TypeInformation<K> keyType,
            WindowAssigner<?, W> assigner,
            TypeInformation<ACC> accumulatorType,
            TypeInformation<OUT> valueType) {
        this.keyType = Objects.requireNonNull(keyType);
        this.assigner = Objects.requireNonNull(assigner);
        this.windowType = assigner.getWindowSerializer(new ExecutionConfig());
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
                assigner.getWindowSerializer(executionConfigOf(config)),
                accumulatorType.createSerializer(config),
                valueType.createSerializer(config));
    }

    /**
     * The ExecutionConfig that {@code config} belongs to, found as Flink's own {@code
     * TypeInformation#createSerializer(SerializerConfig)} finds it for type information that needs
     * one: a job's SerializerConfig (at graph building, in a task, in a source) always has it. A
     * SerializerConfig of no job gets a default one.
     */
    private static ExecutionConfig executionConfigOf(SerializerConfig config) {
        ExecutionConfig owner =
                config instanceof SerializerConfigImpl ? ((SerializerConfigImpl) config).getExecutionConfig() : null;
        return owner != null ? owner : new ExecutionConfig();
    }

    @Override
    @Deprecated
    public TypeSerializer<CecRecord<K, W, ACC, OUT>> createSerializer(ExecutionConfig config) {
        return createSerializer(config.getSerializerConfig());
    }

    @Override
    public String toString() {
        return "CecRecord<" + keyType + ", " + windowType.getClass().getSimpleName() + ", "
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
                && windowType.equals(that.windowType)
                && accumulatorType.equals(that.accumulatorType)
                && valueType.equals(that.valueType);
    }

    @Override
    public int hashCode() {
        return Objects.hash(keyType, windowType, accumulatorType, valueType);
    }

    @Override
    public boolean canEqual(Object obj) {
        return obj instanceof CecRecordTypeInfo;
    }
}
