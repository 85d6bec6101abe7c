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

package org.appendlog.statebackend.faults;

import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/** A long serializer that a test can make throw at its n-th (de)serialization. */
public final class FailingLongSerializer extends TypeSerializerSingleton<Long> {

    private static final long serialVersionUID = 1L;

    public static final FailingLongSerializer INSTANCE = new FailingLongSerializer();

    /** Countdowns; the call that takes one from 1 to 0 throws. 0 means disarmed. */
    private static final AtomicInteger serializeCountdown = new AtomicInteger();
    private static final AtomicInteger deserializeCountdown = new AtomicInteger();

    public static void failSerializeAt(int n) {
        serializeCountdown.set(n);
    }

    public static void failDeserializeAt(int n) {
        deserializeCountdown.set(n);
    }

    public static void disarm() {
        serializeCountdown.set(0);
        deserializeCountdown.set(0);
    }

    private static void maybeFail(AtomicInteger countdown, String what) {
        if (countdown.get() > 0 && countdown.decrementAndGet() == 0) {
            throw new IllegalStateException("Injected failure of the state serializer's " + what);
        }
    }

    @Override
    public boolean isImmutableType() {
        return true;
    }

    @Override
    public Long createInstance() {
        return 0L;
    }

    @Override
    public Long copy(Long from) {
        return from;
    }

    @Override
    public Long copy(Long from, Long reuse) {
        return from;
    }

    @Override
    public int getLength() {
        return 8;
    }

    @Override
    public void serialize(Long record, DataOutputView target) throws IOException {
        maybeFail(serializeCountdown, "serialize");
        target.writeLong(record);
    }

    @Override
    public Long deserialize(DataInputView source) throws IOException {
        maybeFail(deserializeCountdown, "deserialize");
        return source.readLong();
    }

    @Override
    public Long deserialize(Long reuse, DataInputView source) throws IOException {
        return deserialize(source);
    }

    @Override
    public void copy(DataInputView source, DataOutputView target) throws IOException {
        target.writeLong(source.readLong());
    }

    @Override
    public TypeSerializerSnapshot<Long> snapshotConfiguration() {
        return new Snapshot();
    }

    /** Restores as this serializer. */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<Long> {
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }
}
