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
