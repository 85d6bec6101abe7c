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

package org.appendlog.statebackend.tracking;

import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.internal.InternalValueState;

import java.io.IOException;

final class TrackedValueState<K, N, V> extends TrackedKvState<K, N, V, InternalValueState<K, N, V>>
        implements InternalValueState<K, N, V> {

    TrackedValueState(
            InternalValueState<K, N, V> delegate,
            int stateId,
            ChangeTracker tracker,
            InternalKeyContext<K> keyContext) {
        super(delegate, stateId, tracker, keyContext);
    }

    @Override
    public V value() throws IOException {
        return delegate.value();
    }

    @Override
    public void update(V value) throws IOException {
        delegate.update(value);
        written(currentNamespace, value);
    }
}
