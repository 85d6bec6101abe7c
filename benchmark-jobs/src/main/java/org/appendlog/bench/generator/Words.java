package org.appendlog.bench.generator;

/** The words of the generated vocabulary: word {@code i} is spelled {@code "w" + i}. */
public final class Words {

    private Words() {}

    public static String spell(int id) {
        return "w" + id;
    }

    /** The id of a word spelled by {@link #spell}; parsing is cheaper than a map from word to id. */
    public static int idOf(String word) {
        return Integer.parseInt(word, 1, word.length(), 10);
    }
}
