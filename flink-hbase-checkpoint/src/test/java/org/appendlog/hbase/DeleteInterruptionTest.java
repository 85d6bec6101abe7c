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
