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

package org.appendlog.bench.harness;

import org.apache.flink.configuration.Configuration;

import java.util.Locale;

/**
 * The state backends the harness compares, each selected purely by Flink configuration, exactly
 * as a user would select it in {@code flink-conf.yaml}.
 */
public enum Backend {
    HASHMAP("hashmap", "hashmap"),
    ROCKSDB("rocksdb", "rocksdb incremental"),
    CHANGELOG("changelog", "changelog over hashmap"),
    APPENDLOG("appendlog", "appendlog"),
    APPENDLOG_NOCOMPACT("appendlog-nocompact", "appendlog, no compaction");

    static final String APPENDLOG_FACTORY = "org.appendlog.statebackend.AppendLogStateBackendFactory";

    /** The name used on the command line and in the result files. */
    public final String id;

    public final String label;

    Backend(String id, String label) {
        this.id = id;
        this.label = label;
    }

    public static Backend parse(String id) {
        for (Backend backend : values()) {
            if (backend.id.equals(id.trim().toLowerCase(Locale.ROOT))) {
                return backend;
            }
        }
        throw new IllegalArgumentException(
                "Unknown backend '" + id + "': use hashmap, rocksdb, changelog, appendlog or appendlog-nocompact");
    }

    /**
     * Why this backend cannot run in this JVM, or null if it can (the appendlog backend is a
     * separate jar that may be missing from the classpath).
     */
    public String unavailableReason() {
        if (this != APPENDLOG && this != APPENDLOG_NOCOMPACT) {
            return null;
        }
        try {
            Class.forName(APPENDLOG_FACTORY, false, Backend.class.getClassLoader());
            return null;
        } catch (ClassNotFoundException e) {
            return APPENDLOG_FACTORY + " is not on the classpath (install flink-statebackend-appendlog)";
        }
    }

    /**
     * Selects this backend in {@code conf}; its durable logs go under {@code logDirectory} (a
     * file system URI), its local working files under {@code localDir}.
     */
    public void configure(Configuration conf, String logDirectory, String localDir) {
        switch (this) {
            case HASHMAP:
                conf.setString("state.backend.type", "hashmap");
                break;
            case ROCKSDB:
                conf.setString("state.backend.type", "rocksdb");
                conf.setString("execution.checkpointing.incremental", "true");
                conf.setString("state.backend.rocksdb.localdir", localDir + "/rocksdb");
                break;
            case CHANGELOG:
                conf.setString("state.backend.type", "hashmap");
                conf.setString("state.changelog.enabled", "true");
                conf.setString("state.changelog.storage", "filesystem");
                conf.setString("state.changelog.dstl.dfs.base-path", logDirectory + "/changelog");
                break;
            case APPENDLOG:
            case APPENDLOG_NOCOMPACT:
                conf.setString("state.backend.type", APPENDLOG_FACTORY);
                conf.setString("state.backend.appendlog.dir", logDirectory + "/appendlog");
                conf.setString(
                        "state.backend.appendlog.compaction.enabled",
                        Boolean.toString(this == APPENDLOG));
                break;
            default:
                throw new IllegalStateException("unreachable");
        }
    }
}
