package org.appendlog.hbase;

import org.apache.hadoop.hbase.client.RetriesExhaustedException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;

import static org.assertj.core.api.Assertions.assertThat;

/** Which failures of a delete make it start over: interrupts, never timeouts or other errors. */
class DeleteInterruptionTest {

    @Test
    void interruptsAsTheHBaseClientReportsThemStartTheDeleteOver() {
        assertThat(CheckpointTable.isInterruption(new InterruptedIOException())).isTrue();
        // How a scanner's iterator reports it.
        assertThat(CheckpointTable.isInterruption(new UncheckedIOException(new InterruptedIOException())))
                .isTrue();
        assertThat(
                        CheckpointTable.isInterruption(
                                new RetriesExhaustedException(
                                        "gave up", new InterruptedIOException())))
                .isTrue();
        assertThat(CheckpointTable.isInterruption(new IOException(new InterruptedException())))
                .isTrue();
        assertThat(CheckpointTable.isInterruption(new ClosedByInterruptException())).isTrue();
    }

    @Test
    void timeoutsAndOtherFailuresDoNot() {
        // A SocketTimeoutException is an InterruptedIOException, but deleting again would only
        // wait for the same unreachable server once more.
        assertThat(CheckpointTable.isInterruption(new SocketTimeoutException("callTimeout=60000")))
                .isFalse();
        assertThat(
                        CheckpointTable.isInterruption(
                                new RetriesExhaustedException(
                                        "gave up", new SocketTimeoutException("timed out"))))
                .isFalse();
        assertThat(CheckpointTable.isInterruption(new IOException("region server aborted")))
                .isFalse();
    }
}
