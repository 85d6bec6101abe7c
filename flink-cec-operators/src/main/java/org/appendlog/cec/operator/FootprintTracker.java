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

import org.appendlog.cec.log.LogPosition;

import org.apache.flink.streaming.api.windowing.windows.Window;

import javax.annotation.Nullable;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.TreeMap;

/**
 * The CEC policy's bookkeeping: every open window ordered by the age of its last footprint (the
 * oldest gives the recovery horizon), and per mode the windows a policy shot may check.
 *
 * <ul>
 *   <li>eventual mode: slow windows (open for at least H, changed or not), oldest footprint first.
 *       Windows enter a queue in the order they open and become slow when H has passed, so a
 *       shot costs O(M log N) whatever the number of young windows.
 *   <li>barrier mode: windows changed since their last footprint, oldest footprint first; only a
 *       window's first change after a footprint costs a tree insertion, so tracking is cheap for
 *       hot windows.
 * </ul>
 */
final class FootprintTracker {

    private final boolean tracksSlow;
    /**
     * Every open window, oldest footprint first: a list linked through the windows, since a new
     * footprint always moves its window to the end (O(1), where a tree costs two searches).
     */
    @Nullable private OpenWindow<?, ?, ?> oldest;
    @Nullable private OpenWindow<?, ?, ?> newest;
    private final TreeMap<Long, OpenWindow<?, ?, ?>> changedByFootprint = new TreeMap<>();
    private final TreeMap<Long, OpenWindow<?, ?, ?>> slowByFootprint = new TreeMap<>();
    /** Windows not slow yet, in the order they opened (closed ones leave when they reach the head). */
    private final ArrayDeque<OpenWindow<?, ?, ?>> young = new ArrayDeque<>();
    private long nextSequence;

    /** @param tracksSlow whether the eventual policy asks for slow windows ({@link #promoteSlow}) */
    FootprintTracker(boolean tracksSlow) {
        this.tracksSlow = tracksSlow;
    }

    /** A window opened or was rebuilt from the log: it is young unless its open time says otherwise. */
    void opened(OpenWindow<?, ?, ?> window) {
        if (!tracksSlow) {
            return;
        }
        if (window.openTime == Long.MIN_VALUE) {
            window.slow = true;
            slowByFootprint.put(window.footprintSequence, window);
        } else {
            young.add(window);
        }
    }

    /** The window's state was just written to the log at {@code position} (OPEN, CHECK or a rebuild). */
    void footprinted(OpenWindow<?, ?, ?> window, long now, LogPosition position) {
        long previous = window.footprintSequence;
        unlink(window);
        if (window.changed) {
            changedByFootprint.remove(previous);
            window.changed = false;
        }
        window.footprintSequence = nextSequence++;
        window.footprintTime = now;
        window.footprintPosition = position;
        append(window);
        if (window.slow) {
            // Footprint sequences are unique: the entry of `previous` can only be this window's.
            slowByFootprint.remove(previous);
            slowByFootprint.put(window.footprintSequence, window);
        }
    }

    private void append(OpenWindow<?, ?, ?> window) {
        window.olderFootprint = newest;
        window.newerFootprint = null;
        if (newest == null) {
            oldest = window;
        } else {
            newest.newerFootprint = window;
        }
        newest = window;
    }

    private void unlink(OpenWindow<?, ?, ?> window) {
        if (window.olderFootprint == null && oldest != window) {
            return; // not in the list
        }
        if (window.olderFootprint == null) {
            oldest = window.newerFootprint;
        } else {
            window.olderFootprint.newerFootprint = window.newerFootprint;
        }
        if (window.newerFootprint == null) {
            newest = window.olderFootprint;
        } else {
            window.newerFootprint.olderFootprint = window.olderFootprint;
        }
        window.olderFootprint = null;
        window.newerFootprint = null;
    }

    void changed(OpenWindow<?, ?, ?> window) {
        if (!window.changed) {
            window.changed = true;
            changedByFootprint.put(window.footprintSequence, window);
        }
    }

    void closed(OpenWindow<?, ?, ?> window) {
        window.closed = true;
        unlink(window);
        if (window.changed) {
            changedByFootprint.remove(window.footprintSequence);
            window.changed = false;
        }
        if (window.slow) {
            slowByFootprint.remove(window.footprintSequence);
        }
    }

    /** Where the oldest footprint of an open window starts, or null if no window is open. */
    @Nullable
    LogPosition horizon() {
        return oldest == null ? null : oldest.footprintPosition;
    }

    /** Marks the windows that opened at or before {@code openedBy} slow. */
    void promoteSlow(long openedBy) {
        while (!young.isEmpty() && young.peek().openTime <= openedBy) {
            OpenWindow<?, ?, ?> window = young.poll();
            if (!window.closed) {
                window.slow = true;
                slowByFootprint.put(window.footprintSequence, window);
            }
        }
    }

    int slowCount() {
        return slowByFootprint.size();
    }

    /** Up to {@code max} slow windows, oldest footprint first. */
    <K, W extends Window, ACC> List<OpenWindow<K, W, ACC>> oldestSlow(int max) {
        return first(slowByFootprint, max);
    }

    /** Up to {@code max} changed windows whose footprint is at least {@code threshold} old, oldest first. */
    @SuppressWarnings("unchecked")
    <K, W extends Window, ACC> List<OpenWindow<K, W, ACC>> slowChanged(long now, long threshold, int max) {
        List<OpenWindow<K, W, ACC>> result = new ArrayList<>();
        Iterator<OpenWindow<?, ?, ?>> it = changedByFootprint.values().iterator();
        while (it.hasNext() && result.size() < max) {
            OpenWindow<?, ?, ?> w = it.next();
            if (now - w.footprintTime < threshold) {
                break;
            }
            result.add((OpenWindow<K, W, ACC>) w);
        }
        return result;
    }

    /** All windows changed since their last footprint, oldest footprint first. */
    <K, W extends Window, ACC> List<OpenWindow<K, W, ACC>> allChanged() {
        return first(changedByFootprint, Integer.MAX_VALUE);
    }

    @SuppressWarnings("unchecked")
    private static <K, W extends Window, ACC> List<OpenWindow<K, W, ACC>> first(
            TreeMap<Long, OpenWindow<?, ?, ?>> windows, int max) {
        List<OpenWindow<K, W, ACC>> result = new ArrayList<>(Math.min(max, windows.size()));
        for (OpenWindow<?, ?, ?> w : windows.values()) {
            if (result.size() == max) {
                break;
            }
            result.add((OpenWindow<K, W, ACC>) w);
        }
        return result;
    }
}
