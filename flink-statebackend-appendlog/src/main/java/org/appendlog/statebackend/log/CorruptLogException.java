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

import java.io.IOException;

/** A batch that fails its checks; the message names the file and the byte offset. */
public class CorruptLogException extends IOException {

    private static final long serialVersionUID = 1L;

    public CorruptLogException(String file, long offset, String problem) {
        this(file, "offset " + offset, problem);
    }

    /** {@code position} as {@link KeyGroupRecords#positionOf} gives it. */
    public CorruptLogException(String file, String position, String problem) {
        super("Corrupt state log " + file + " at " + position + ": " + problem);
    }
}
