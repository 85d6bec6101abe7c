package org.appendlog.bench.harness;

import java.io.IOException;
import java.util.function.ObjLongConsumer;

/** What a storage holds right now, entry by entry (a file, a table cell), each with its size in bytes. */
interface StoredEntries {

    /**
     * Passes every entry's unique name and size to {@code entry}. Entries deleted while being
     * listed may be missed or fail the listing; the next listing sees the rest.
     */
    void list(ObjLongConsumer<String> entry) throws IOException;
}
