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

import javax.annotation.Nullable;

import java.util.Objects;

/**
 * One tuple of a CEC operator's output stream: {@code OPEN(key, window, t, n)}, {@code CHECK(key,
 * window, accumulator, t, n)} or {@code RESULT(key, window, value, t, n)}.
 *
 * <p>{@code timestamp} is the stream time of the tuple; it never decreases along one subtask's
 * stream, which is what makes the persisted stream seekable by time. For a RESULT of an event-time
 * window it equals {@code window.maxTimestamp()}, as in Flink's own window operator. {@code
 * openWindows} is {@code n}, the number of windows the subtask has open after this tuple. {@code
 * count} is the number of elements the window has absorbed (count windows need it to resume).
 */
public final class CecRecord<K, W, ACC, OUT> {

    private final CecRecordKind kind;
    private final K key;
    private final W window;
    private final long timestamp;
    private final int openWindows;
    private final long count;
    @Nullable private final ACC accumulator;
    @Nullable private final OUT value;

    public CecRecord(
            CecRecordKind kind,
            K key,
            W window,
            long timestamp,
            int openWindows,
            long count,
            @Nullable ACC accumulator,
            @Nullable OUT value) {
        this.kind = Objects.requireNonNull(kind);
        this.key = key;
        this.window = window;
        this.timestamp = timestamp;
        this.openWindows = openWindows;
        this.count = count;
        this.accumulator = accumulator;
        this.value = value;
    }

    public static <K, W, ACC, OUT> CecRecord<K, W, ACC, OUT> open(
            K key, W window, long timestamp, int openWindows) {
        return new CecRecord<>(CecRecordKind.OPEN, key, window, timestamp, openWindows, 0, null, null);
    }

    public static <K, W, ACC, OUT> CecRecord<K, W, ACC, OUT> check(
            K key, W window, long timestamp, int openWindows, long count, ACC accumulator) {
        return new CecRecord<>(
                CecRecordKind.CHECK, key, window, timestamp, openWindows, count, accumulator, null);
    }

    public static <K, W, ACC, OUT> CecRecord<K, W, ACC, OUT> result(
            K key, W window, long timestamp, int openWindows, long count, OUT value) {
        return new CecRecord<>(
                CecRecordKind.RESULT, key, window, timestamp, openWindows, count, null, value);
    }

    public CecRecordKind getKind() {
        return kind;
    }

    public boolean isResult() {
        return kind == CecRecordKind.RESULT;
    }

    public K getKey() {
        return key;
    }

    public W getWindow() {
        return window;
    }

    public long getTimestamp() {
        return timestamp;
    }

    public int getOpenWindows() {
        return openWindows;
    }

    public long getCount() {
        return count;
    }

    /** The accumulator of a CHECK tuple; {@code null} for other kinds. */
    @Nullable
    public ACC getAccumulator() {
        return accumulator;
    }

    /** The result of a RESULT tuple; {@code null} for other kinds. */
    @Nullable
    public OUT getValue() {
        return value;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof CecRecord)) {
            return false;
        }
        CecRecord<?, ?, ?, ?> that = (CecRecord<?, ?, ?, ?>) o;
        return timestamp == that.timestamp
                && openWindows == that.openWindows
                && count == that.count
                && kind == that.kind
                && Objects.equals(key, that.key)
                && Objects.equals(window, that.window)
                && Objects.equals(accumulator, that.accumulator)
                && Objects.equals(value, that.value);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, key, window, timestamp, openWindows, count, accumulator, value);
    }

    @Override
    public String toString() {
        StringBuilder sb =
                new StringBuilder(kind.name())
                        .append('(')
                        .append(key)
                        .append(", ")
                        .append(window);
        if (kind == CecRecordKind.CHECK) {
            sb.append(", acc=").append(accumulator);
        } else if (kind == CecRecordKind.RESULT) {
            sb.append(", value=").append(value);
        }
        return sb.append(", t=")
                .append(timestamp)
                .append(", n=")
                .append(openWindows)
                .append(", count=")
                .append(count)
                .append(')')
                .toString();
    }
}
