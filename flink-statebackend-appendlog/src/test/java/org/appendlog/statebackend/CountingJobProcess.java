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

package org.appendlog.statebackend;

import org.appendlog.testing.S3Server;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;

import java.nio.file.Paths;
import java.util.Set;
import java.util.TreeSet;

/**
 * A TaskManager to kill: a JVM of its own that runs the {@link CountingJob} on a mini cluster,
 * with the file systems of a plugins directory, retaining its checkpoints, and prints {@code job
 * <id>} and then {@code completed <id>} for every checkpoint that completed, until it is killed.
 *
 * <p>Arguments: the plugins directory, the checkpoint directory, the log directory, the number of
 * records, records per second, and then {@code key=value} options of the file systems.
 */
public final class CountingJobProcess {

    private CountingJobProcess() {}

    public static void main(String[] args) throws Exception {
        Configuration fileSystems = new Configuration();
        for (int i = 5; i < args.length; i++) {
            String[] option = args[i].split("=", 2);
            fileSystems.setString(option[0], option[1]);
        }
        S3Server.loadS3Plugin(fileSystems, Paths.get(args[0]));
        CountingJob job = new CountingJob(Long.parseLong(args[3]), Double.parseDouble(args[4]));
        Configuration jobConfig = retained(CountingJob.withAppendLog(CountingJob.jobConfig(args[1]), args[2]));

        MiniCluster cluster =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(fileSystems)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(2)
                                .build());
        cluster.start();
        JobID jobId =
                cluster.submitJob(job.jobGraph(jobConfig, 2, SavepointRestoreSettings.none()))
                        .get()
                        .getJobID();
        System.out.println("job " + jobId);
        Set<Long> printed = new TreeSet<>();
        while (true) {
            for (long id : PerKeyCounter.completedCheckpoints()) {
                if (printed.add(id)) {
                    System.out.println("completed " + id);
                }
            }
            System.out.flush();
            Thread.sleep(10);
        }
    }

    /** Checkpoints that outlive the job, as a job that may lose its TaskManager keeps them. */
    static Configuration retained(Configuration jobConfig) {
        jobConfig.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        return jobConfig;
    }
}
