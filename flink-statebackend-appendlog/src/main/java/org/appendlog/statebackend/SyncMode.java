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

import org.apache.flink.configuration.DescribedEnum;
import org.apache.flink.configuration.description.InlineElement;
import org.apache.flink.core.fs.FSDataOutputStream;

import java.io.IOException;

import static org.apache.flink.configuration.description.TextElement.text;

/** How a batch is made durable at the end of a checkpoint's asynchronous phase. */
public enum SyncMode implements DescribedEnum {
    HSYNC("Flush to every replica's disk (FSDataOutputStream#sync, HDFS hsync)."),
    HFLUSH("Flush to every replica's memory (FSDataOutputStream#flush, HDFS hflush)."),
    NONE("No explicit flush; durability is left to the file system.");

    private final String description;

    SyncMode(String description) {
        this.description = description;
    }

    /** One group commit: called once per appended batch. */
    public void commit(FSDataOutputStream out) throws IOException {
        switch (this) {
            case HSYNC:
                out.sync();
                break;
            case HFLUSH:
                out.flush();
                break;
            case NONE:
                break;
        }
    }

    @Override
    public InlineElement getDescription() {
        return text(description);
    }
}
