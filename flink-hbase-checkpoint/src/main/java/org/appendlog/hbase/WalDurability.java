package org.appendlog.hbase;

import org.apache.hadoop.hbase.client.Durability;

/** The write-ahead-log durabilities a user may choose for checkpoint writes. */
public enum WalDurability {
    SYNC_WAL(Durability.SYNC_WAL),
    FSYNC_WAL(Durability.FSYNC_WAL),
    ASYNC_WAL(Durability.ASYNC_WAL),
    SKIP_WAL(Durability.SKIP_WAL);

    private final Durability hbaseDurability;

    WalDurability(Durability hbaseDurability) {
        this.hbaseDurability = hbaseDurability;
    }

    Durability toHBase() {
        return hbaseDurability;
    }
}
