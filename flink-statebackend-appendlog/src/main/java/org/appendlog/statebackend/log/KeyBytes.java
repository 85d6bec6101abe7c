package org.appendlog.statebackend.log;

/**
 * An entry's identity as the log stores it: the state id and the serialized key and namespace.
 * Indexing and deduplicating by these bytes needs no deserialization and compares no objects.
 */
public final class KeyBytes {

    private KeyBytes() {}

    /** A well-mixed hash of {@code state} and {@code bytes[offset, offset + length)}. */
    public static int hash(int state, byte[] bytes, int offset, int length) {
        int h = state;
        for (int i = offset, end = offset + length; i < end; i++) {
            h = 31 * h + bytes[i];
        }
        h *= 0x9E3779B9;
        return h ^ (h >>> 16);
    }
}
