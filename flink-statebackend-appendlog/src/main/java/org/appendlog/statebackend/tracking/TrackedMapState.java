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
import org.apache.flink.runtime.state.internal.InternalMapState;

import java.util.Iterator;
import java.util.Map;

/** The iterators and views of a map state can remove entries, so handing one out marks it. */
final class TrackedMapState<K, N, UK, UV>
        extends TrackedKvState<K, N, Map<UK, UV>, InternalMapState<K, N, UK, UV>>
        implements InternalMapState<K, N, UK, UV> {

    TrackedMapState(
            InternalMapState<K, N, UK, UV> delegate,
            int stateId,
            ChangeTracker tracker,
            InternalKeyContext<K> keyContext) {
        super(delegate, stateId, tracker, keyContext);
    }

    @Override
    public UV get(UK key) throws Exception {
        return delegate.get(key);
    }

    @Override
    public void put(UK key, UV value) throws Exception {
        delegate.put(key, value);
        markDirty();
    }

    @Override
    public void putAll(Map<UK, UV> map) throws Exception {
        delegate.putAll(map);
        markDirty();
    }

    @Override
    public void remove(UK key) throws Exception {
        delegate.remove(key);
        markDirty();
    }

    @Override
    public boolean contains(UK key) throws Exception {
        return delegate.contains(key);
    }

    @Override
    public Iterable<Map.Entry<UK, UV>> entries() throws Exception {
        markDirty();
        return delegate.entries();
    }

    @Override
    public Iterable<UK> keys() throws Exception {
        markDirty();
        return delegate.keys();
    }

    @Override
    public Iterable<UV> values() throws Exception {
        markDirty();
        return delegate.values();
    }

    @Override
    public Iterator<Map.Entry<UK, UV>> iterator() throws Exception {
        markDirty();
        return delegate.iterator();
    }

    @Override
    public boolean isEmpty() throws Exception {
        return delegate.isEmpty();
    }
}
