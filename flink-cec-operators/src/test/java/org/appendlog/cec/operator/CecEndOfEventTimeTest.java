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

package org.appendlog.cec.operator;

import org.appendlog.cec.WordCountJob;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecRecordTypeInfo;
import org.appendlog.cec.operator.CecWindowOperator;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The end-of-input watermark ends event time for the rest of the run, as in Flink's window
 * operator: records that arrive after it (another input resumed after the one that ended made the
 * watermark jump) are late, and open no window that would never fire. A job cannot order its
 * inputs that way on purpose, so this drives the operator through Flink's test harness.
 */
class CecEndOfEventTimeTest {

    @TempDir Path dir;

    @Test
    void recordsAfterTheEndOfEventTimeAreLate() throws Exception {
        TumblingEventTimeWindows windows = TumblingEventTimeWindows.of(Duration.ofMillis(10));
        CecRecordTypeInfo<String, TimeWindow, Long, Long> type =
                new CecRecordTypeInfo<>(Types.STRING, windows, Types.LONG, Types.LONG);
        CecWindowOperator<String, Tuple2<String, Long>, Long, Long, TimeWindow> operator =
                new CecWindowOperator<>(
                        windows,
                        Types.TUPLE(Types.STRING, Types.LONG),
                        0,
                        new WordCountJob.Count(),
                        type,
                        CecOptions.builder(dir.toUri().toString()).build());
        KeySelector<Tuple2<String, Long>, String> word = w -> w.f0;
        List<String> tuples;
        try (KeyedOneInputStreamOperatorTestHarness<String, Tuple2<String, Long>, CecRecord<String, TimeWindow, Long, Long>>
                harness = new KeyedOneInputStreamOperatorTestHarness<>(operator, word, Types.STRING)) {
            harness.getStreamConfig().setOperatorName("cec");
            harness.open();
            harness.processElement(new StreamRecord<>(Tuple2.of("a", 1L), 1));
            harness.processWatermark(Long.MAX_VALUE);
            harness.processElement(new StreamRecord<>(Tuple2.of("b", 15L), 15));
            tuples =
                    harness.extractOutputValues().stream()
                            .map(t -> t.getKind() + " " + t.getKey() + " " + t.getWindow().getStart())
                            .collect(Collectors.toList());
        }
        assertThat(tuples).containsExactly("OPEN a 0", "RESULT a 0");
    }
}
