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

package org.appendlog.cec.source;

import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecRecordKind;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.source.reader.SingleThreadMultiplexSourceReaderBase;
import org.apache.flink.core.memory.DataInputDeserializer;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Source reader of {@link CecLogSource}: decodes log records into {@link CecRecord}s, skipping the
 * operator's internal records.
 */
final class CecLogSourceReader<K, W, ACC, OUT>
        extends SingleThreadMultiplexSourceReaderBase<
                PositionedRecord, CecRecord<K, W, ACC, OUT>, CecLogSplit, CecLogSplitState> {

    CecLogSourceReader(SourceReaderContext context, TypeSerializer<CecRecord<K, W, ACC, OUT>> serializer) {
        this(context, serializer, new AtomicLong());
    }

    private CecLogSourceReader(
            SourceReaderContext context, TypeSerializer<CecRecord<K, W, ACC, OUT>> serializer, AtomicLong lagBytes) {
        super(
                () -> new CecLogSplitReader(lagBytes),
                (element, output, state) -> {
                    // The operator's internal records (its logged input) are not tuples.
                    if (CecRecordKind.isTuple(element.record.payload())) {
                        DataInputDeserializer in = new DataInputDeserializer(element.record.payload());
                        output.collect(serializer.deserialize(in), element.record.timestamp());
                    }
                    state.next = element.next;
                },
                new Configuration(),
                context);
        context.metricGroup().gauge(CecLogSourceMetrics.LAG_BYTES, lagBytes::get);
        context.metricGroup().setPendingBytesGauge(lagBytes::get);
    }

    @Override
    public void start() {
        if (getNumberOfCurrentlyAssignedSplits() == 0) {
            context.sendSplitRequest();
        }
    }

    @Override
    protected void onSplitFinished(Map<String, CecLogSplitState> finishedSplitIds) {
        context.sendSplitRequest();
    }

    @Override
    protected CecLogSplitState initializedState(CecLogSplit split) {
        return new CecLogSplitState(split);
    }

    @Override
    protected CecLogSplit toSplitType(String splitId, CecLogSplitState state) {
        return state.toSplit();
    }
}
