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

package org.appendlog.cec.log;

import java.util.zip.CRC32C;

/**
 * One record of a persisted stream as framed in a segment:
 *
 * <pre>
 *   int    length (= 8 + payload length)
 *   long   timestamp
 *   byte[] payload
 *   int    CRC32C over timestamp and payload
 *   int    length again, so the log can be read backwards
 * </pre>
 *
 * <p>The timestamp sits outside the payload so that the log and its time index never need to
 * understand the payload.
 */
public final class LogRecord {

    /** Bytes a frame adds around its payload. */
    public static final int FRAME_OVERHEAD = 4 + 8 + 4 + 4;

    private final long timestamp;
    private final byte[] payload;
    private final long offset;

    LogRecord(long timestamp, byte[] payload, long offset) {
        this.timestamp = timestamp;
        this.payload = payload;
        this.offset = offset;
    }

    public long timestamp() {
        return timestamp;
    }

    public byte[] payload() {
        return payload;
    }

    /** Offset of the frame's first byte in its segment. */
    public long offset() {
        return offset;
    }

    public long endOffset() {
        return offset + FRAME_OVERHEAD + payload.length;
    }

    static void encode(long timestamp, byte[] payload, int length, byte[] frame) {
        int len = 8 + length;
        putInt(frame, 0, len);
        putLong(frame, 4, timestamp);
        System.arraycopy(payload, 0, frame, 12, length);
        CRC32C crc = new CRC32C();
        crc.update(frame, 4, len);
        putInt(frame, 4 + len, (int) crc.getValue());
        putInt(frame, 8 + len, len);
    }

    /**
     * Decodes the frame that occupies {@code buf[pos, pos + frameLength)}, verifying its checksum;
     * {@code where} names the file for the error message.
     */
    static LogRecord decode(byte[] buf, int pos, long fileOffset, String where) throws CorruptCecLogException {
        int len = getInt(buf, pos);
        int trailer = getInt(buf, pos + 8 + len);
        CRC32C crc = new CRC32C();
        crc.update(buf, pos + 4, len);
        if (trailer != len || (int) crc.getValue() != getInt(buf, pos + 4 + len)) {
            throw new CorruptCecLogException(
                    where, fileOffset, "record of length " + len + ", trailer " + trailer + ": checksum mismatch or torn write");
        }
        byte[] payload = new byte[len - 8];
        System.arraycopy(buf, pos + 12, payload, 0, payload.length);
        return new LogRecord(getLong(buf, pos + 4), payload, fileOffset);
    }

    static int getInt(byte[] b, int p) {
        return ((b[p] & 0xFF) << 24) | ((b[p + 1] & 0xFF) << 16) | ((b[p + 2] & 0xFF) << 8) | (b[p + 3] & 0xFF);
    }

    static long getLong(byte[] b, int p) {
        return ((long) getInt(b, p) << 32) | (getInt(b, p + 4) & 0xFFFFFFFFL);
    }

    static void putInt(byte[] b, int p, int v) {
        b[p] = (byte) (v >>> 24);
        b[p + 1] = (byte) (v >>> 16);
        b[p + 2] = (byte) (v >>> 8);
        b[p + 3] = (byte) v;
    }

    static void putLong(byte[] b, int p, long v) {
        putInt(b, p, (int) (v >>> 32));
        putInt(b, p + 4, (int) v);
    }
}
