package org.appendlog.bench.jobs;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TopKEntriesTest {

    @Test
    void keepsTheBestKByCountThenLowerWordId() {
        long[] top = TopKEntries.EMPTY;
        top = TopKEntries.insert(top, 3, 5, 10);
        top = TopKEntries.insert(top, 3, 7, 30);
        top = TopKEntries.insert(top, 3, 2, 10);
        top = TopKEntries.insert(top, 3, 9, 1);
        top = TopKEntries.insert(top, 3, 1, 20);
        assertThat(top).containsExactly(7, 30, 1, 20, 2, 10);
        assertThat(TopKEntries.format(top)).isEqualTo("[w7=30, w1=20, w2=10]");
    }
}
