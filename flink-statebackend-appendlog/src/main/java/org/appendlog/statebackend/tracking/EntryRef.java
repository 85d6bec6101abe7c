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


/** Identifies one state entry: (state, key, namespace), plus the key group it belongs to. */
public final class EntryRef {

    private final int stateId;
    private final Object key;
    private final Object namespace;
    private final int keyGroup;
    private final int hash;

    public EntryRef(int stateId, Object key, Object namespace, int keyGroup) {
        this.stateId = stateId;
        this.key = key;
        this.namespace = namespace;
        this.keyGroup = keyGroup;
        this.hash = 31 * (31 * stateId + key.hashCode()) + namespace.hashCode();
    }

    public int stateId() {
        return stateId;
    }

    public Object key() {
        return key;
    }

    public Object namespace() {
        return namespace;
    }

    public int keyGroup() {
        return keyGroup;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof EntryRef)) {
            return false;
        }
        EntryRef that = (EntryRef) o;
        return stateId == that.stateId
                && hash == that.hash
                && key.equals(that.key)
                && namespace.equals(that.namespace);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        return "state " + stateId + ", key " + key + ", namespace " + namespace;
    }

    /** Identity of key and namespace objects is checked first: the common repeated-write case. */
    boolean sameAs(int stateId, Object key, Object namespace) {
        return this.stateId == stateId
                && (this.key == key || this.key.equals(key))
                && (this.namespace == namespace || this.namespace.equals(namespace));
    }

}
