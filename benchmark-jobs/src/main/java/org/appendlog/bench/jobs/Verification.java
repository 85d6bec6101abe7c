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

package org.appendlog.bench.jobs;

/** Whether a job's final result equals what the generator implies, and a line that says so. */
public final class Verification {

    public final boolean passed;
    public final String summary;

    private Verification(boolean passed, String summary) {
        this.passed = passed;
        this.summary = summary;
    }

    public static Verification passed(String summary) {
        return new Verification(true, summary);
    }

    public static Verification failed(String summary) {
        return new Verification(false, summary);
    }

    @Override
    public String toString() {
        return (passed ? "VERIFIED: " : "VERIFICATION FAILED: ") + summary;
    }
}
