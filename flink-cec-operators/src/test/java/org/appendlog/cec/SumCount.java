package org.appendlog.cec;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;

/** Sum and count of the values of (word, timestamp, value) events; result "sum/count". */
public final class SumCount implements AggregateFunction<Tuple3<String, Long, Long>, Tuple2<Long, Long>, String> {

    @Override
    public Tuple2<Long, Long> createAccumulator() {
        return Tuple2.of(0L, 0L);
    }

    @Override
    public Tuple2<Long, Long> add(Tuple3<String, Long, Long> value, Tuple2<Long, Long> acc) {
        return Tuple2.of(acc.f0 + value.f2, acc.f1 + 1);
    }

    @Override
    public String getResult(Tuple2<Long, Long> acc) {
        return acc.f0 + "/" + acc.f1;
    }

    @Override
    public Tuple2<Long, Long> merge(Tuple2<Long, Long> a, Tuple2<Long, Long> b) {
        return Tuple2.of(a.f0 + b.f0, a.f1 + b.f1);
    }
}
