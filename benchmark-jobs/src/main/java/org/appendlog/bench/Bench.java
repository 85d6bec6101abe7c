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

package org.appendlog.bench;

import org.appendlog.bench.harness.Harness;
import org.appendlog.bench.harness.Profile;
import org.appendlog.bench.harness.RunResult;

import java.util.List;

/**
 * The {@code bench} command: runs the word-count and top-K jobs under every state backend and
 * checkpoint storage side by side in this JVM and writes tables and charts. See the module README.
 *
 * <p>Exits 1 if a configuration that ran produced a wrong result or failed, 2 on bad options.
 */
public final class Bench {

    private Bench() {}

    public static void main(String[] argv) throws Exception {
        Args args = new Args(argv);
        if (args.flag("help")) {
            System.out.println("Usage: bench [options]\n" + Profile.USAGE);
            return;
        }
        Profile profile;
        try {
            profile = new Profile(args);
            args.rejectUnknown();
        } catch (IllegalArgumentException e) {
            System.err.println("bench: " + e.getMessage());
            System.exit(2);
            return;
        }
        List<RunResult> results = new Harness(profile, System.out).run("bench " + String.join(" ", argv));
        boolean wrong = false;
        for (RunResult r : results) {
            if (r.status.startsWith("failed") || (r.ran() && !r.verified)) {
                wrong = true;
            }
        }
        // Flink and Hadoop leave non-daemon threads behind; the run is over
        System.exit(wrong ? 1 : 0);
    }
}
