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

package org.appendlog.cec.bench;

import java.util.HashMap;
import java.util.Map;

/** The benchmark's {@code --name value} arguments, each read with its default. */
final class BenchArgs {

    private final Map<String, String> values = new HashMap<>();

    BenchArgs(String[] argv) {
        for (int i = 0; i < argv.length; i += 2) {
            if (!argv[i].startsWith("--") || i + 1 == argv.length) {
                throw new IllegalArgumentException("Expected --name value pairs, got '" + argv[i] + "'");
            }
            values.put(argv[i].substring(2), argv[i + 1]);
        }
    }

    String string(String name, String otherwise) {
        return values.getOrDefault(name, otherwise);
    }

    long longValue(String name, long otherwise) {
        return values.containsKey(name) ? Long.parseLong(values.get(name)) : otherwise;
    }

    int intValue(String name, int otherwise) {
        return (int) longValue(name, otherwise);
    }

    double doubleValue(String name, double otherwise) {
        return values.containsKey(name) ? Double.parseDouble(values.get(name)) : otherwise;
    }

    boolean flag(String name, boolean otherwise) {
        return values.containsKey(name) ? Boolean.parseBoolean(values.get(name)) : otherwise;
    }
}
