package org.appendlog.statebackend;

import org.apache.flink.streaming.api.functions.sink.SinkFunction;

/** Hands every {@link CountUpdate} to {@link EmittedCounts} in the test's JVM. */
public class CollectingSink implements SinkFunction<CountUpdate> {

    @Override
    public void invoke(CountUpdate value, Context context) {
        EmittedCounts.add(value);
    }
}
