package org.appendlog.cec.source;

import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * What the split enumerator of {@link CecLogSource} checkpoints: the splits not assigned yet and,
 * when it follows the stream, the subtask directories it has found (their splits are assigned or
 * pending), so that a restore does not hand a directory out twice.
 */
public final class CecLogEnumeratorState {

    private final List<CecLogSplit> unassigned;
    private final Set<String> discovered;

    CecLogEnumeratorState(Collection<CecLogSplit> unassigned, Collection<String> discovered) {
        this.unassigned = List.copyOf(unassigned);
        this.discovered = Set.copyOf(discovered);
    }

    List<CecLogSplit> unassigned() {
        return unassigned;
    }

    Set<String> discovered() {
        return discovered;
    }
}
