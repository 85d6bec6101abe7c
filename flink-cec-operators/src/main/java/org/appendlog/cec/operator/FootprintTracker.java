package org.appendlog.cec.operator;

import org.apache.flink.streaming.api.windowing.windows.Window;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.TreeMap;

/**
 * The CEC policy's bookkeeping: which open windows changed since their last footprint, ordered by
 * the age of that footprint. Every period T the operator asks for the slow ones (footprint at
 * least H old, still changing) and writes a CHECK for at most M of them, oldest first; at a
 * barrier it asks for all changed windows. Only a window's first change after a footprint costs a
 * tree insertion, so tracking is cheap for hot windows.
 */
final class FootprintTracker {

    private final TreeMap<Long, OpenWindow<?, ?, ?>> changedByFootprint = new TreeMap<>();
    private long nextSequence;

    /** The window's state was just written to the log (OPEN, CHECK or a rebuild from the log). */
    void footprinted(OpenWindow<?, ?, ?> window, long now) {
        if (window.changed) {
            changedByFootprint.remove(window.footprintSequence);
            window.changed = false;
        }
        window.footprintSequence = nextSequence++;
        window.footprintTime = now;
    }

    void changed(OpenWindow<?, ?, ?> window) {
        if (!window.changed) {
            window.changed = true;
            changedByFootprint.put(window.footprintSequence, window);
        }
    }

    void closed(OpenWindow<?, ?, ?> window) {
        if (window.changed) {
            changedByFootprint.remove(window.footprintSequence);
            window.changed = false;
        }
    }

    /** Up to {@code max} changed windows whose footprint is at least {@code threshold} old, oldest first. */
    @SuppressWarnings("unchecked")
    <K, W extends Window, ACC> List<OpenWindow<K, W, ACC>> slow(long now, long threshold, int max) {
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
    @SuppressWarnings("unchecked")
    <K, W extends Window, ACC> List<OpenWindow<K, W, ACC>> allChanged() {
        List<OpenWindow<K, W, ACC>> result = new ArrayList<>(changedByFootprint.size());
        for (OpenWindow<?, ?, ?> w : changedByFootprint.values()) {
            result.add((OpenWindow<K, W, ACC>) w);
        }
        return result;
    }

    int changedCount() {
        return changedByFootprint.size();
    }
}
