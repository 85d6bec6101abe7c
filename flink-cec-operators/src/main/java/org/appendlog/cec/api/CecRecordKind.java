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

/** The three tuple kinds of a CEC operator's output stream. */
public enum CecRecordKind {
    /** A window was created; its footprint is the empty accumulator. */
    OPEN,
    /** A window's accumulator as of this point of the stream (its latest footprint). */
    CHECK,
    /** A window fired and closed; carries the window's result. */
    RESULT;

    private static final CecRecordKind[] VALUES = values();

    public byte code() {
        return (byte) ordinal();
    }

    /**
     * Whether a record of the persisted stream with this payload is a tuple (its first byte a
     * kind's code); the operator's internal records, such as the logged input, are not.
     */
    public static boolean isTuple(byte[] payload) {
        return payload.length > 0 && payload[0] >= 0 && payload[0] < VALUES.length;
    }

    public static CecRecordKind ofCode(byte code) {
        if (code < 0 || code >= VALUES.length) {
            throw new IllegalArgumentException("Unknown CEC record kind code " + code);
        }
        return VALUES[code];
    }
}
