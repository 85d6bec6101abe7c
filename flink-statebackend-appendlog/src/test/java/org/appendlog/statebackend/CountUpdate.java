package org.appendlog.statebackend;

/** What the per-key counting job emits: the key's count after one record, and who counted it. */
public class CountUpdate {

    public int key;
    public long count;
    /** The attempt number of the counting subtask: it grows by one with every restart. */
    public int attempt;

    public CountUpdate() {}

    public CountUpdate(int key, long count, int attempt) {
        this.key = key;
        this.count = count;
        this.attempt = attempt;
    }

    @Override
    public String toString() {
        return "(" + key + ", " + count + ", attempt " + attempt + ")";
    }
}
