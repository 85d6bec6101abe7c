package org.appendlog.examples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class WordCountTest {

    @TempDir Path dir;

    @Test
    void countsEveryWordExactlyOnTheAppendLogBackend() throws Exception {
        assertThat(WordCount.run(50_000, dir)).isTrue();
    }
}
