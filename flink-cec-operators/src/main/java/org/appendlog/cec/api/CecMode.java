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

package org.appendlog.cec.api;

import org.apache.flink.configuration.DescribedEnum;
import org.apache.flink.configuration.description.InlineElement;

import static org.apache.flink.configuration.description.TextElement.text;

/**
 * How a CEC window operator checkpoints its windows ({@code cec.mode}). The value names are those
 * of the configuration ({@code eventual}, {@code open-only}, {@code barrier}).
 */
public enum CecMode implements DescribedEnum {
    EVENTUAL(
            "eventual",
            "every window is checkpointed on its own by CHECK tuples of the CEC policy (slow windows "
                    + "at least every T, changed or not); the operator logs its input next to its tuples, "
                    + "a Flink checkpoint records log positions only (no CHECKs at the barrier, log synced "
                    + "in the asynchronous part) and recovery replays the logged input from the oldest "
                    + "footprint of an open window."),
    OPEN_ONLY(
            "open-only",
            "only OPEN and RESULT tuples, no CHECKs; the operator logs its input and recovery replays it "
                    + "from the OPEN of the oldest open window (so replay grows with window lifetime)."),
    BARRIER(
            "barrier",
            "at every checkpoint barrier a CHECK for every window changed since its last footprint and a "
                    + "log sync on the task thread; between barriers the policy writes CHECKs for changed "
                    + "windows whose footprint is at least H old. The input is not logged.");

    private final String value;
    private final String description;

    CecMode(String value, String description) {
        this.value = value;
        this.description = description;
    }

    /** Whether the operator logs its input, so that recovery replays it from the recovery horizon. */
    public boolean logsInput() {
        return this != BARRIER;
    }

    @Override
    public InlineElement getDescription() {
        return text(description);
    }

    /** The configuration value; Flink parses enum options by this name, ignoring case. */
    @Override
    public String toString() {
        return value;
    }
}
