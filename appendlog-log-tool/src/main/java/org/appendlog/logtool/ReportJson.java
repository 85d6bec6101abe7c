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

package org.appendlog.logtool;

import org.appendlog.statebackend.tool.LogReport;

import org.apache.flink.core.fs.Path;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.JsonProcessingException;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A {@link LogReport} as the one JSON document of {@code --json}, written with the Jackson that
 * Flink's distribution ships shaded (so the tool jar bundles no JSON library). The shape is
 * documented in the backend's README; {@code "format": 1} changes only if a field is removed or
 * its meaning changes.
 */
final class ReportJson {

    static final int FORMAT = 1;

    private static final ObjectMapper MAPPER =
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private ReportJson() {}

    static String write(String command, Path path, LogReport report) {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("format", FORMAT);
        root.put("command", command);
        root.put("path", path.toString());
        if (report.checkpointId() >= 0) {
            root.put("checkpointId", report.checkpointId());
        } else {
            root.putNull("checkpointId");
        }
        ArrayNode segments = root.putArray("segments");
        for (LogReport.Segment segment : report.segments()) {
            segments.addObject().put("file", segment.file).put("bytes", segment.bytes);
        }
        ArrayNode batches = root.putArray("batches");
        for (LogReport.Batch batch : report.batches()) {
            ObjectNode node =
                    batches.addObject()
                            .put("file", batch.file)
                            .put("offset", batch.offset)
                            .put("length", batch.length)
                            .put("checkpointId", batch.checkpointId)
                            .put("minCheckpointId", batch.minCheckpointId)
                            .put("firstKeyGroup", batch.firstKeyGroup)
                            .put("lastKeyGroup", batch.lastKeyGroup)
                            .put("records", batch.records);
            ArrayNode states = node.putArray("states");
            batch.states.forEach(states::add);
        }
        ArrayNode problems = root.putArray("problems");
        for (LogReport.Problem problem : report.problems()) {
            problems.addObject()
                    .put("file", problem.file)
                    .put("offset", problem.offset)
                    .put("message", problem.message);
        }
        root.putObject("totals")
                .put("segments", report.segments().size())
                .put("batches", report.batches().size())
                .put("bytes", report.totalBytes())
                .put("uncompressedBytes", report.uncompressedBytes())
                .put("liveEntries", report.liveEntries())
                .put("liveRecordBytes", report.liveRecordBytes())
                .put("liveRatio", report.liveRatio())
                .put("problems", report.problems().size());
        try {
            return MAPPER.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the report as JSON", e);
        }
    }
}
