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

package org.appendlog.bench.compaction;

import javax.imageio.ImageIO;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** A line chart drawn with Java2D: one line per series over a shared x axis. */
final class LineChart {

    private static final Color[] COLORS = {
        new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
        new Color(0xd62728), new Color(0x9467bd), new Color(0x7f7f7f)
    };
    private static final int WIDTH = 1000;
    private static final int HEIGHT = 560;
    private static final int LEFT = 90;
    private static final int RIGHT = 200;
    private static final int TOP = 50;
    private static final int BOTTOM = 50;

    private final String title;
    private final String xLabel;
    private final String yLabel;
    private final List<String> names = new ArrayList<>();
    private final List<double[]> series = new ArrayList<>();

    LineChart(String title, String xLabel, String yLabel) {
        this.title = title;
        this.xLabel = xLabel;
        this.yLabel = yLabel;
    }

    void add(String name, double[] values) {
        names.add(name);
        series.add(values);
    }

    void write(File file) throws IOException {
        BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, HEIGHT);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString(title, LEFT, 28);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));

            int points = 0;
            double max = 0;
            for (double[] values : series) {
                points = Math.max(points, values.length);
                for (double v : values) {
                    max = Math.max(max, v);
                }
            }
            max = max == 0 ? 1 : max * 1.05;
            int plotWidth = WIDTH - LEFT - RIGHT;
            int plotHeight = HEIGHT - TOP - BOTTOM;
            g.drawLine(LEFT, TOP, LEFT, TOP + plotHeight);
            g.drawLine(LEFT, TOP + plotHeight, LEFT + plotWidth, TOP + plotHeight);
            for (int tick = 0; tick <= 4; tick++) {
                int y = TOP + plotHeight - tick * plotHeight / 4;
                g.drawString(String.format("%.1f", max * tick / 4), 8, y + 4);
            }
            g.drawString(yLabel, 8, TOP - 8);
            g.drawString(xLabel + " (0 .. " + Math.max(0, points - 1) + ")", LEFT + plotWidth / 2 - 60, HEIGHT - 15);

            for (int s = 0; s < series.size(); s++) {
                double[] values = series.get(s);
                g.setColor(COLORS[s % COLORS.length]);
                g.setStroke(new BasicStroke(2f));
                for (int i = 1; i < values.length; i++) {
                    g.drawLine(
                            x(i - 1, points, plotWidth), y(values[i - 1], max, plotHeight),
                            x(i, points, plotWidth), y(values[i], max, plotHeight));
                }
                g.fillRect(LEFT + plotWidth + 20, TOP + 20 * s, 12, 12);
                g.setColor(Color.BLACK);
                g.drawString(names.get(s), LEFT + plotWidth + 38, TOP + 20 * s + 11);
            }
        } finally {
            g.dispose();
        }
        ImageIO.write(image, "png", file);
    }

    private static int x(int i, int points, int plotWidth) {
        return LEFT + (points <= 1 ? 0 : i * plotWidth / (points - 1));
    }

    private static int y(double value, double max, int plotHeight) {
        return TOP + plotHeight - (int) (value / max * plotHeight);
    }
}
