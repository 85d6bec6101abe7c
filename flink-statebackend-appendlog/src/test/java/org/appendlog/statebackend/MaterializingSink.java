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

package org.appendlog.statebackend;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.sink.RichSinkFunction;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;

import org.assertj.core.api.SoftAssertions;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Applies a SQL query's changelog (+I and +U add a row, -U and -D take one away) to a multiset of
 * rows kept in checkpointed operator state, so that after a restart the view is that of the
 * checkpoint the query's keyed state was restored from (checkpoints are aligned, exactly once),
 * and replayed output counts once. One subtask: a row and its retraction, sent by the same upstream
 * subtask, arrive in order. The attempt that finishes publishes its view, the query's final table.
 * A retraction of a row the view does not hold is recorded as an anomaly.
 *
 * <p>Rows are compared as text ({@link #describe}), so that expected tables computed in Java need
 * not match the SQL types (Long 3 and Integer 3 read the same).
 */
final class MaterializingSink extends RichSinkFunction<Row> implements CheckpointedFunction {

    private static final Map<String, Map<String, Long>> FINAL_VIEWS = new ConcurrentHashMap<>();
    private static final Map<String, Integer> FINISHED_ATTEMPTS = new ConcurrentHashMap<>();
    private static final Set<String> RESTORED_VIEWS = ConcurrentHashMap.newKeySet();
    private static final List<String> ANOMALIES = Collections.synchronizedList(new ArrayList<>());

    private final String query;
    private transient Map<String, Long> view;
    private transient ListState<Map<String, Long>> checkpointed;

    private MaterializingSink(String query) {
        this.query = query;
    }

    /**
     * Sends {@code table}'s changelog into a sink named and uid'd {@code sink-<query>}, at
     * parallelism 1 and never chained to the query's last operator. The planner sets no uids on a
     * query's operators (table.exec.uid.generation PLAN_ONLY), and the ids Flink generates for
     * them depend on which operators are chained: unchained sinks keep them the same at any
     * parallelism of the job, so that its savepoints restore at another one.
     */
    static void materialize(StreamTableEnvironment tableEnv, String query, Table table) {
        tableEnv.toChangelogStream(table)
                .addSink(new MaterializingSink(query))
                .setParallelism(1)
                .disableChaining()
                .uid("sink-" + query)
                .name("sink-" + query);
    }

    static void reset() {
        FINAL_VIEWS.clear();
        FINISHED_ATTEMPTS.clear();
        RESTORED_VIEWS.clear();
        ANOMALIES.clear();
    }

    static Map<String, Long> finalView(String query) {
        return FINAL_VIEWS.getOrDefault(query, Collections.emptyMap());
    }

    /** Per query whose sink finished, the attempt number of the sink that finished. */
    static Map<String, Integer> finishedAttempts() {
        return new TreeMap<>(FINISHED_ATTEMPTS);
    }

    /** The queries whose sink restored a non-empty view. */
    static Set<String> restoredViews() {
        return new TreeSet<>(RESTORED_VIEWS);
    }

    static List<String> anomalies() {
        synchronized (ANOMALIES) {
            return new ArrayList<>(ANOMALIES);
        }
    }

    /**
     * Asserts that no view saw an anomaly and that every query's final table is {@code expected}'s,
     * naming per query that differs the sizes and the first rows missing and unexpected.
     */
    static void assertFinalTables(
            Map<String, Map<String, Long>> expected,
            Map<String, Map<String, Long>> actual,
            String description) {
        Map<String, String> differences = new TreeMap<>();
        for (Map.Entry<String, Map<String, Long>> query : expected.entrySet()) {
            String difference =
                    difference(
                            query.getValue(),
                            actual.getOrDefault(query.getKey(), Collections.emptyMap()));
            if (!difference.isEmpty()) {
                differences.put(query.getKey(), difference);
            }
        }
        SoftAssertions.assertSoftly(
                soft -> {
                    soft.assertThat(anomalies())
                            .as("retractions of rows the materialized view did not hold")
                            .isEmpty();
                    soft.assertThat(differences)
                            .as("queries whose final table %s differs from the expected one",
                                    description)
                            .isEmpty();
                });
    }

    /** Adds one row of {@code fields} to {@code table}. */
    static void add(Map<String, Long> table, Object... fields) {
        table.merge(describe(fields), 1L, Long::sum);
    }

    /** A row's fields, without its kind; Long 3 and Integer 3 read the same. */
    static String describe(Object... fields) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < fields.length; i++) {
            text.append(i == 0 ? "" : ", ").append(fields[i]);
        }
        return text.toString();
    }

    private static String describe(Row row) {
        Object[] fields = new Object[row.getArity()];
        for (int i = 0; i < fields.length; i++) {
            fields[i] = row.getField(i);
        }
        return describe(fields);
    }

    /** Empty if equal, else the sizes and the first rows missing and unexpected. */
    private static String difference(Map<String, Long> expected, Map<String, Long> actual) {
        if (expected.equals(actual)) {
            return "";
        }
        Set<String> rows = new TreeSet<>(expected.keySet());
        rows.addAll(actual.keySet());
        List<String> wrong = new ArrayList<>();
        for (String row : rows) {
            long want = expected.getOrDefault(row, 0L);
            long got = actual.getOrDefault(row, 0L);
            if (want != got) {
                wrong.add("[" + row + "] expected " + want + " times, got " + got);
            }
        }
        return String.format(
                "%d rows expected, %d rows materialized, %d rows differ, e.g. %s",
                expected.values().stream().mapToLong(Long::longValue).sum(),
                actual.values().stream().mapToLong(Long::longValue).sum(),
                wrong.size(),
                wrong.subList(0, Math.min(8, wrong.size())));
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        checkpointed =
                context.getOperatorStateStore()
                        .getListState(
                                new ListStateDescriptor<>(
                                        "view", Types.MAP(Types.STRING, Types.LONG)));
        view = new HashMap<>();
        for (Map<String, Long> restored : checkpointed.get()) {
            view.putAll(restored);
        }
        if (context.isRestored() && !view.isEmpty()) {
            RESTORED_VIEWS.add(query);
        }
    }

    @Override
    public void invoke(Row row, Context context) {
        String described = describe(row);
        switch (row.getKind()) {
            case INSERT:
            case UPDATE_AFTER:
                apply(described, 1);
                break;
            case UPDATE_BEFORE:
            case DELETE:
                apply(described, -1);
                break;
            default:
                throw new IllegalStateException("Unknown row kind of " + row);
        }
    }

    private void apply(String row, long delta) {
        long count = view.getOrDefault(row, 0L) + delta;
        if (count == 0) {
            view.remove(row);
        } else {
            view.put(row, count);
        }
        if (count < 0) {
            ANOMALIES.add(
                    query
                            + ": retracted ["
                            + row
                            + "] in attempt "
                            + getRuntimeContext().getTaskInfo().getAttemptNumber());
        }
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        checkpointed.update(Collections.singletonList(new HashMap<>(view)));
    }

    @Override
    public void finish() {
        FINAL_VIEWS.put(query, new HashMap<>(view));
        FINISHED_ATTEMPTS.put(query, getRuntimeContext().getTaskInfo().getAttemptNumber());
    }
}
