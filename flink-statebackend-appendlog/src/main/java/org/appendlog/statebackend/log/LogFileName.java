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

package org.appendlog.statebackend.log;

import org.apache.flink.runtime.state.KeyGroupRange;

import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The parts of a log file's name: {@code kg-<first>-<last>-r<run>-<writer>-c<floor>-<seq>.seg},
 * and {@code ...-c<floor>-run-<seq>.seg} for a compacted run. The run is the id of the execution
 * graph of the attempt that wrote the file (all attempts of one job run share it; a new
 * submission or a JobManager failover gets a new one), the writer the backend instance, the floor
 * the lowest checkpoint id that may refer to the file ({@link ReferenceFloor}). Files of earlier
 * versions, without run and floor, are never swept.
 */
public final class LogFileName {

    private static final Pattern NAME =
            Pattern.compile(
                    "kg-(\\d+)-(\\d+)-r([0-9a-f]{32})-([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})"
                            + "-c(\\d+)-(?:run-)?\\d+\\.seg");

    private final KeyGroupRange keyGroups;
    private final String run;
    private final String writer;
    private final long floor;

    private LogFileName(KeyGroupRange keyGroups, String run, String writer, long floor) {
        this.keyGroups = keyGroups;
        this.run = run;
        this.writer = writer;
        this.floor = floor;
    }

    public KeyGroupRange keyGroups() {
        return keyGroups;
    }

    public String run() {
        return run;
    }

    public String writer() {
        return writer;
    }

    public long floor() {
        return floor;
    }

    /** The name prefix of a writer's files, before the floor; without a run if none is known. */
    public static String prefix(KeyGroupRange keyGroups, String run, UUID writer) {
        return String.format(
                "kg-%d-%d-%s%s",
                keyGroups.getStartKeyGroup(),
                keyGroups.getEndKeyGroup(),
                run == null ? "" : "r" + run + "-",
                writer);
    }

    /** The parts of {@code name}, or null if it is no log file with a run and a floor. */
    public static LogFileName parse(String name) {
        Matcher m = NAME.matcher(name);
        if (!m.matches()) {
            return null;
        }
        return new LogFileName(
                KeyGroupRange.of(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))),
                m.group(3),
                m.group(4),
                Long.parseLong(m.group(5)));
    }
}
