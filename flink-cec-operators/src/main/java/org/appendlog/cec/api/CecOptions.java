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

import org.appendlog.cec.log.LogPermissions;
import org.appendlog.cec.log.LogRetention;
import org.appendlog.cec.log.ObjectStoreRefusal;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.core.fs.Path;

import java.io.Serializable;
import java.time.Duration;

/**
 * Options of one CEC window operator. Only the log path is required; the mode (eventual) and the
 * CEC policy defaults (T = 1 s, H = 10 s, M = 1000) need no tuning for ordinary jobs. See {@link
 * CecConfigOptions}.
 */
public final class CecOptions implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String logPath;
    private final CecMode mode;
    private final long periodMillis;
    private final long slowThresholdMillis;
    private final int maxWindowsPerShot;
    private final long segmentBytes;
    private final long indexIntervalBytes;
    private final long retentionMillis;
    private final long retentionBytes;
    private final short directoryMode;
    private final short fileMode;

    private CecOptions(ReadableConfig config) {
        this.logPath =
                config.getOptional(CecConfigOptions.LOG_PATH)
                        .orElseThrow(
                                () -> new IllegalArgumentException(
                                        "CEC window operator needs '" + CecConfigOptions.LOG_PATH.key()
                                                + "': the directory of its persisted output stream"));
        this.mode = config.get(CecConfigOptions.MODE);
        this.periodMillis = nonNegative(CecConfigOptions.POLICY_PERIOD, config.get(CecConfigOptions.POLICY_PERIOD));
        this.slowThresholdMillis =
                nonNegative(CecConfigOptions.POLICY_SLOW_THRESHOLD, config.get(CecConfigOptions.POLICY_SLOW_THRESHOLD));
        this.maxWindowsPerShot = config.get(CecConfigOptions.POLICY_MAX_WINDOWS_PER_SHOT);
        if (maxWindowsPerShot < 1) {
            throw bad(CecConfigOptions.POLICY_MAX_WINDOWS_PER_SHOT, maxWindowsPerShot, "must be at least 1");
        }
        this.segmentBytes = config.get(CecConfigOptions.LOG_SEGMENT_SIZE).getBytes();
        if (segmentBytes < 1024) {
            throw bad(CecConfigOptions.LOG_SEGMENT_SIZE, segmentBytes + " bytes", "must be at least 1kb");
        }
        this.indexIntervalBytes = config.get(CecConfigOptions.LOG_INDEX_INTERVAL).getBytes();
        if (indexIntervalBytes < 1) {
            throw bad(CecConfigOptions.LOG_INDEX_INTERVAL, indexIntervalBytes + " bytes", "must be positive");
        }
        Duration retentionTime = config.get(CecConfigOptions.LOG_RETENTION_TIME);
        if (retentionTime.isNegative() || retentionTime.isZero()) {
            throw bad(CecConfigOptions.LOG_RETENTION_TIME, retentionTime, "must be positive");
        }
        this.retentionMillis = retentionTime.toMillis();
        this.retentionBytes =
                config.getOptional(CecConfigOptions.LOG_RETENTION_SIZE).map(MemorySize::getBytes).orElse(LogRetention.UNBOUNDED);
        if (retentionBytes < 1) {
            throw bad(CecConfigOptions.LOG_RETENTION_SIZE, retentionBytes + " bytes", "must be positive");
        }
        this.directoryMode = mode(config, CecConfigOptions.LOG_DIRECTORY_PERMISSIONS);
        this.fileMode = mode(config, CecConfigOptions.LOG_FILE_PERMISSIONS);
        try {
            new Path(logPath).toUri();
        } catch (IllegalArgumentException e) {
            throw bad(CecConfigOptions.LOG_PATH, logPath, "is not a valid path or URI: " + e.getMessage());
        }
        ObjectStoreRefusal.checkScheme(CecConfigOptions.LOG_PATH.key(), logPath);
    }

    /** Options read from a configuration that holds at least {@code cec.log.path}. */
    public static CecOptions fromConfiguration(ReadableConfig config) {
        return new CecOptions(config);
    }

    /** Starts options for a stream persisted under {@code logPath}, all else at defaults. */
    public static Builder builder(String logPath) {
        return new Builder().set(CecConfigOptions.LOG_PATH, logPath);
    }

    private static long nonNegative(ConfigOption<Duration> option, Duration value) {
        if (value.isNegative()) {
            throw bad(option, value, "must not be negative");
        }
        return value.toMillis();
    }

    /** A permission mode: 3 or 4 octal digits, such as {@code 700}. */
    private static short mode(ReadableConfig config, ConfigOption<String> option) {
        String value = config.get(option).trim();
        if (!value.matches("[0-7]{3,4}")) {
            throw bad(option, value, "is not a permission mode of 3 or 4 octal digits, such as 700");
        }
        return (short) Integer.parseInt(value, 8);
    }

    private static IllegalArgumentException bad(ConfigOption<?> option, Object value, String why) {
        return new IllegalArgumentException(
                "Invalid value '" + value + "' for '" + option.key() + "': " + why);
    }

    public Path logPath() {
        return new Path(logPath);
    }

    public CecMode mode() {
        return mode;
    }

    /** T in milliseconds on the operator's clock; 0 turns the CEC policy off. */
    public long periodMillis() {
        return periodMillis;
    }

    /** H in milliseconds. */
    public long slowThresholdMillis() {
        return slowThresholdMillis;
    }

    /** M. */
    public int maxWindowsPerShot() {
        return maxWindowsPerShot;
    }

    public long segmentBytes() {
        return segmentBytes;
    }

    public long indexIntervalBytes() {
        return indexIntervalBytes;
    }

    /** How far behind the stream's newest timestamp a segment's newest record may be before it is deleted. */
    public long retentionMillis() {
        return retentionMillis;
    }

    /** The bytes a subtask's directory may hold, or {@link LogRetention#UNBOUNDED} for no bound by size. */
    public long retentionBytes() {
        return retentionBytes;
    }

    /** The permissions of the subtask directories and the files of the log. */
    public LogPermissions logPermissions() {
        return LogPermissions.of(directoryMode, fileMode);
    }

    @Override
    public String toString() {
        return "CecOptions{logPath=" + logPath + ", mode=" + mode + ", T=" + periodMillis + "ms, H=" + slowThresholdMillis
                + "ms, M=" + maxWindowsPerShot + ", segmentBytes=" + segmentBytes + ", indexIntervalBytes="
                + indexIntervalBytes + ", retentionMillis=" + retentionMillis + ", retentionBytes="
                + (retentionBytes == LogRetention.UNBOUNDED ? "unbounded" : String.valueOf(retentionBytes))
                + ", permissions=" + logPermissions() + "}";
    }

    /** Builds {@link CecOptions}; every setter maps to one {@link CecConfigOptions} key. */
    public static final class Builder {
        private final Configuration config = new Configuration();

        private Builder() {}

        public <T> Builder set(ConfigOption<T> option, T value) {
            config.set(option, value);
            return this;
        }

        public Builder mode(CecMode mode) {
            return set(CecConfigOptions.MODE, mode);
        }

        public Builder period(Duration t) {
            return set(CecConfigOptions.POLICY_PERIOD, t);
        }

        public Builder slowThreshold(Duration h) {
            return set(CecConfigOptions.POLICY_SLOW_THRESHOLD, h);
        }

        public Builder maxWindowsPerShot(int m) {
            return set(CecConfigOptions.POLICY_MAX_WINDOWS_PER_SHOT, m);
        }

        public Builder retentionTime(Duration time) {
            return set(CecConfigOptions.LOG_RETENTION_TIME, time);
        }

        public Builder retentionSize(MemorySize size) {
            return set(CecConfigOptions.LOG_RETENTION_SIZE, size);
        }

        public CecOptions build() {
            return new CecOptions(config);
        }
    }
}
