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

package org.appendlog.testing;

import org.apache.flink.api.common.JobID;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.runtime.rest.messages.checkpoints.CheckpointingStatisticsHeaders;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A job's checkpoints as Flink's REST API reports them ({@code GET /jobs/<id>/checkpoints}, which
 * {@link CheckpointingStatisticsHeaders} describes): the history, newest first, and the checkpoint
 * the job last restored from. The JSON is read as such: the REST message classes keep {@code
 * persisted_data} to themselves. The history holds the latest {@link
 * WebOptions#CHECKPOINTS_HISTORY_SIZE} checkpoints (10 unless the cluster sets it). Shared with
 * the other modules' tests through this module's test jar.
 */
public final class CheckpointHistory {

    /** One checkpoint of the history. */
    public static final class Checkpoint {
        public final long id;
        public final String status;
        /**
         * {@code UNALIGNED_CHECKPOINT} when a subtask took its snapshot unaligned, else {@code
         * CHECKPOINT} (or a savepoint's type).
         */
        public final String type;
        /** Bytes of in-flight data (channel state) that the checkpoint persisted. */
        public final long persistedData;
        /** When the JobManager triggered it, in milliseconds since the epoch. */
        public final long triggerTimestamp;

        Checkpoint(
                long id, String status, String type, long persistedData, long triggerTimestamp) {
            this.id = id;
            this.status = status;
            this.type = type;
            this.persistedData = persistedData;
            this.triggerTimestamp = triggerTimestamp;
        }

        public boolean isCompleted() {
            return "COMPLETED".equals(status);
        }

        public boolean isUnaligned() {
            return "UNALIGNED_CHECKPOINT".equals(type);
        }

        @Override
        public String toString() {
            return "#" + id + " " + status + " " + type + " persisted_data=" + persistedData;
        }
    }

    private final List<Checkpoint> history;
    private final OptionalLong restoredId;

    private CheckpointHistory(List<Checkpoint> history, OptionalLong restoredId) {
        this.history = Collections.unmodifiableList(history);
        this.restoredId = restoredId;
    }

    /** Asks the cluster's REST endpoint, which also answers for a job that ended. */
    public static CheckpointHistory of(RestClusterClient<?> client, JobID jobId) throws Exception {
        String path =
                CheckpointingStatisticsHeaders.getInstance()
                        .getTargetRestEndpointURL()
                        .replace(":jobid", jobId.toString());
        HttpRequest request =
                HttpRequest.newBuilder(URI.create(client.getWebInterfaceURL() + path))
                        .timeout(Duration.ofMinutes(1))
                        .build();
        HttpResponse<String> response =
                HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new AssertionError(
                    "GET " + path + ": " + response.statusCode() + " " + response.body());
        }
        JsonNode json = new ObjectMapper().readTree(response.body());
        List<Checkpoint> history = new ArrayList<>();
        for (JsonNode c : json.get("history")) {
            history.add(
                    new Checkpoint(
                            c.get("id").asLong(),
                            c.get("status").asText(),
                            c.get("checkpoint_type").asText(),
                            c.get("persisted_data").asLong(),
                            c.get("trigger_timestamp").asLong()));
        }
        JsonNode restored = json.get("latest").get("restored");
        return new CheckpointHistory(
                history,
                restored == null || restored.isNull()
                        ? OptionalLong.empty()
                        : OptionalLong.of(restored.get("id").asLong()));
    }

    /** The failed checkpoints of the history, newest first. */
    public List<Checkpoint> failed() {
        return history.stream()
                .filter(c -> c.status.equals("FAILED"))
                .collect(Collectors.toList());
    }

    /** The completed checkpoints of the history, newest first. */
    public List<Checkpoint> completed() {
        return history.stream().filter(Checkpoint::isCompleted).collect(Collectors.toList());
    }

    /** The checkpoint the job last restored from; fails if none or the history lost it. */
    public Checkpoint restored() {
        long id =
                restoredId.orElseThrow(() -> new AssertionError("the job restored no checkpoint"));
        return history.stream()
                .filter(c -> c.id == id)
                .findFirst()
                .orElseThrow(
                        () ->
                                new AssertionError(
                                        "restored checkpoint " + id + " not in " + history));
    }

    /**
     * Asserts that a completed checkpoint and the one the job last restored from were unaligned
     * and persisted in-flight data; returns the restored one.
     */
    public Checkpoint assertRestoredUnalignedWithInFlightData() {
        assertThat(completed())
                .as("completed checkpoints (Flink's REST API) that were unaligned and persisted"
                        + " in-flight data")
                .anyMatch(c -> c.isUnaligned() && c.persistedData > 0);
        Checkpoint restored = restored();
        assertThat(restored.isUnaligned())
                .as("the restored checkpoint %s is unaligned", restored)
                .isTrue();
        assertThat(restored.persistedData)
                .as("in-flight bytes the restored checkpoint %s persisted", restored)
                .isPositive();
        return restored;
    }

    /** How many completed checkpoints were unaligned, their most in-flight bytes, the history. */
    public String summary() {
        List<Checkpoint> completed = completed();
        return completed.stream().filter(Checkpoint::isUnaligned).count()
                + " of "
                + completed.size()
                + " completed checkpoints unaligned, persisted_data up to "
                + completed.stream().mapToLong(c -> c.persistedData).max().orElse(0)
                + " bytes; history "
                + history;
    }

    @Override
    public String toString() {
        return history.toString();
    }
}
