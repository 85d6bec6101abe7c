package org.appendlog.statebackend.tracking;

/**
 * Makes deduplicating a change buffer fail, as running out of memory while growing a table would:
 * a record whose key length points past its chunk.
 */
final class ChangeBufferFaults {

    private ChangeBufferFaults() {}

    /** Appends a malformed record to the buffer of {@code tracker}. */
    static void appendMalformedRecord(ChangeTracker tracker) {
        appendMalformedRecord(tracker.buffer());
    }

    static void appendMalformedRecord(ChangeBuffer buffer) {
        byte[] record = new byte[IntervalWrites.HEADER_BYTES + 4];
        record[4] = 0x10; // key and namespace length: 256 MB
        buffer.append(record, 0, record.length);
    }
}
