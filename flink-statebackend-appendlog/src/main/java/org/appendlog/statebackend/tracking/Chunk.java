package org.appendlog.statebackend.tracking;

/** A filled chunk of encoded records: the bytes used in it and the records they hold. */
final class Chunk {

    final byte[] bytes;
    final int used;
    final int records;

    Chunk(byte[] bytes, int used, int records) {
        this.bytes = bytes;
        this.used = used;
        this.records = records;
    }
}
