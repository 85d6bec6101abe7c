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

import org.appendlog.cec.log.LogPosition;

import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The recovery horizon is the position of the oldest last footprint of an open window: a new
 * footprint (a CHECK) moves its window behind all others, a closed window leaves the order.
 */
class FootprintTrackerTest {

    @Test
    void theHorizonIsTheOldestFootprintOfAnOpenWindow() {
        FootprintTracker tracker = new FootprintTracker(true);
        List<OpenWindow<String, TimeWindow, Long>> windows = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            OpenWindow<String, TimeWindow, Long> window = new OpenWindow<>("w" + i, new TimeWindow(0, 10), i, 0L, 0);
            window.openTime = i;
            tracker.footprinted(window, i, at(100 * i));
            tracker.opened(window);
            windows.add(window);
        }
        assertThat(tracker.horizon()).isEqualTo(at(0));

        tracker.promoteSlow(1); // w0 and w1 open for at least H
        assertThat(tracker.<String, TimeWindow, Long>oldestSlow(10)).containsExactly(windows.get(0), windows.get(1));
        tracker.footprinted(windows.get(0), 3, at(300));
        assertThat(tracker.horizon()).isEqualTo(at(100));
        assertThat(tracker.<String, TimeWindow, Long>oldestSlow(10)).containsExactly(windows.get(1), windows.get(0));

        tracker.closed(windows.get(1));
        assertThat(tracker.horizon()).isEqualTo(at(200));
        assertThat(tracker.slowCount()).isEqualTo(1);
        tracker.closed(windows.get(2));
        assertThat(tracker.horizon()).isEqualTo(at(300));
        tracker.closed(windows.get(0));
        assertThat(tracker.horizon()).isNull();
        assertThat(tracker.slowCount()).isZero();
    }

    private static LogPosition at(long offset) {
        return new LogPosition("seg-0000000000", offset);
    }
}
