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

import javax.imageio.ImageIO;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleFunction;

/**
 * A horizontal grouped bar chart drawn with Java2D: one group per configuration (its label on the
 * left), one bar per series, each bar labelled with its value. Values below zero mean "not
 * measured" and draw no bar.
 */
final class BarChart {

    private static final Color[] COLORS = {
        new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c), new Color(0xd62728)
    };
    private static final int WIDTH = 1100;
    private static final int BAR = 14;
    private static final int GROUP_GAP = 10;
    private static final int LABEL_WIDTH = 330;
    private static final int TOP = 60;

    private final String title;
    private final DoubleFunction<String> valueFormat;
    private final List<String> seriesNames = new ArrayList<>();
    private final List<String> groups = new ArrayList<>();
    private final List<double[]> values = new ArrayList<>();

    BarChart(String title, DoubleFunction<String> valueFormat, String... series) {
        this.title = title;
        this.valueFormat = valueFormat;
        for (String s : series) {
            seriesNames.add(s);
        }
    }

    void add(String group, double... seriesValues) {
        if (seriesValues.length != seriesNames.size()) {
            throw new IllegalArgumentException("one value per series expected");
        }
        groups.add(group);
        values.add(seriesValues);
    }

    void write(File file) throws IOException {
        int groupHeight = seriesNames.size() * BAR + GROUP_GAP;
        int height = TOP + Math.max(1, groups.size()) * groupHeight + 30;
        BufferedImage image = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, height);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString(title, 10, 24);
            drawLegend(g);

            double max = 0;
            for (double[] v : values) {
                for (double x : v) {
                    max = Math.max(max, x);
                }
            }
            int plotWidth = WIDTH - LABEL_WIDTH - 110;
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            FontMetrics metrics = g.getFontMetrics();
            for (int i = 0; i < groups.size(); i++) {
                int y = TOP + i * groupHeight;
                g.setColor(Color.BLACK);
                String label = groups.get(i);
                g.drawString(label, LABEL_WIDTH - 8 - metrics.stringWidth(label), y + seriesNames.size() * BAR / 2 + 5);
                for (int s = 0; s < seriesNames.size(); s++) {
                    double v = values.get(i)[s];
                    int barY = y + s * BAR;
                    if (v < 0) {
                        g.setColor(Color.GRAY);
                        g.drawString("n/a", LABEL_WIDTH + 4, barY + BAR - 3);
                        continue;
                    }
                    int w = max <= 0 ? 0 : (int) Math.round(v / max * plotWidth);
                    g.setColor(COLORS[s % COLORS.length]);
                    g.fillRect(LABEL_WIDTH, barY + 1, Math.max(1, w), BAR - 2);
                    g.setColor(Color.DARK_GRAY);
                    g.drawString(valueFormat.apply(v), LABEL_WIDTH + w + 4, barY + BAR - 3);
                }
            }
            g.setColor(Color.GRAY);
            g.setStroke(new BasicStroke(1));
            g.drawLine(LABEL_WIDTH, TOP - 4, LABEL_WIDTH, height - 26);
        } finally {
            g.dispose();
        }
        ImageIO.write(image, "png", file);
    }

    private void drawLegend(Graphics2D g) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        int x = LABEL_WIDTH;
        for (int s = 0; s < seriesNames.size(); s++) {
            g.setColor(COLORS[s % COLORS.length]);
            g.fillRect(x, 36, 12, 12);
            g.setColor(Color.BLACK);
            g.drawString(seriesNames.get(s), x + 16, 46);
            x += 24 + g.getFontMetrics().stringWidth(seriesNames.get(s));
        }
    }
}
