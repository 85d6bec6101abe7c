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

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Command-line options of the form {@code --name value} or a bare {@code --flag}. Every option a
 * program reads is remembered, so that {@link #rejectUnknown()} can name any misspelt option
 * instead of silently ignoring it.
 */
public final class Args {

    private final Map<String, String> values = new HashMap<>();
    private final Set<String> read = new HashSet<>();

    public Args(String... args) {
        List<String> tokens = new ArrayList<>();
        for (String arg : args) {
            // exec:java passes -Dexec.args="..." as one string on some shells
            tokens.addAll(Arrays.asList(arg.trim().split("\\s+")));
        }
        for (int i = 0; i < tokens.size(); i++) {
            String token = tokens.get(i);
            if (token.isEmpty()) {
                continue;
            }
            if (!token.startsWith("--")) {
                throw new IllegalArgumentException(
                        "Unexpected argument '" + token + "': options look like --name value");
            }
            String name = token.substring(2);
            String value = "true";
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else if (i + 1 < tokens.size() && !tokens.get(i + 1).startsWith("--")) {
                value = tokens.get(++i);
            }
            values.put(name, value);
        }
    }

    public boolean flag(String name) {
        return Boolean.parseBoolean(string(name, "false"));
    }

    public String string(String name, String defaultValue) {
        read.add(name);
        return values.getOrDefault(name, defaultValue);
    }

    public long longValue(String name, long defaultValue) {
        String value = string(name, null);
        try {
            return value == null ? defaultValue : Long.parseLong(value.replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " needs a whole number, got '" + value + "'");
        }
    }

    public int intValue(String name, int defaultValue) {
        return Math.toIntExact(longValue(name, defaultValue));
    }

    public double doubleValue(String name, double defaultValue) {
        String value = string(name, null);
        try {
            return value == null ? defaultValue : Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " needs a number, got '" + value + "'");
        }
    }

    public List<String> list(String name, String defaultValue) {
        List<String> items = new ArrayList<>();
        for (String item : string(name, defaultValue).split(",")) {
            if (!item.trim().isEmpty()) {
                items.add(item.trim());
            }
        }
        return items;
    }

    /** The options given as {@code --flink.<key> value}: Flink configuration, key to value, sorted. */
    public Map<String, String> flinkOptions() {
        Map<String, String> options = new TreeMap<>();
        for (String name : values.keySet()) {
            if (name.startsWith("flink.")) {
                options.put(name.substring("flink.".length()), string(name, null));
            }
        }
        return options;
    }

    /** Fails naming every given option that no one read. */
    public void rejectUnknown() {
        Set<String> unknown = new HashSet<>(values.keySet());
        unknown.removeAll(read);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException(
                    "Unknown option(s): --" + String.join(", --", unknown) + " (see --help)");
        }
    }
}
