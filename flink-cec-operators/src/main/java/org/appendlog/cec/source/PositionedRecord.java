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

package org.appendlog.cec.source;

import org.appendlog.cec.log.LogPosition;
import org.appendlog.cec.log.LogRecord;

/** A record read from the log together with the position of the record after it. */
final class PositionedRecord {

    final LogRecord record;
    final LogPosition next;

    PositionedRecord(LogRecord record, LogPosition next) {
        this.record = record;
        this.next = next;
    }
}
