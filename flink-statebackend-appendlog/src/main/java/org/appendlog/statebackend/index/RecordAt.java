package org.appendlog.statebackend.index;

/**
 * Where one record is, as the index keeps it: segment number, batch number in the segment,
 * position among the batch's record bytes of the record's key group, and length. Mutable and
 * reused record after record, so that indexing a batch allocates nothing per record.
 */
final class RecordAt {

    int segment;
    int batch;
    int position;
    int length;

    RecordAt set(int segment, int batch, int position, int length) {
        this.segment = segment;
        this.batch = batch;
        this.position = position;
        this.length = length;
        return this;
    }

    /** The record at {@code position} of this place's batch, {@code length} bytes. */
    RecordAt record(int position, int length) {
        this.position = position;
        this.length = length;
        return this;
    }
}
