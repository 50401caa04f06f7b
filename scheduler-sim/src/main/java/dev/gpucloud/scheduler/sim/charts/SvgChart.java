package dev.gpucloud.scheduler.sim.charts;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A small SVG writer for the simulator's charts: line charts (several series, linear or log x axis)
 * and bar charts, with a title, axis labels, ticks, a legend and the command that made the chart
 * written under it. No library; the output is plain SVG 1.1 text.
 */
public final class SvgChart {

    /** One line: its name and points (NaN y values are gaps). */
    public record Series(String name, double[] x, double[] y) {
        public Series {
            if (x.length != y.length) {
                throw new IllegalArgumentException("series " + name + ": x and y differ in length");
            }
        }
    }

    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
        "#e377c2", "#7f7f7f"};
    private static final int W = 760;
    private static final int H = 440;
    private static final int LEFT = 80;
    private static final int RIGHT = 170;
    private static final int TOP = 40;
    private static final int BOTTOM = 80;

    private final String title;
    private final String xLabel;
    private final String yLabel;
    private final List<Series> series = new ArrayList<>();
    private boolean logX;
    private Double yMin;
    private Double yMax;
    private String command = "";

    public SvgChart(String title, String xLabel, String yLabel) {
        this.title = title;
        this.xLabel = xLabel;
        this.yLabel = yLabel;
    }

    public SvgChart add(Series s) {
        series.add(s);
        return this;
    }

    public SvgChart add(String name, double[] x, double[] y) {
        return add(new Series(name, x, y));
    }

    public SvgChart logX() {
        this.logX = true;
        return this;
    }

    public SvgChart yRange(double min, double max) {
        this.yMin = min;
        this.yMax = max;
        return this;
    }

    /** The command line that made the chart, printed under it. */
    public SvgChart command(String cmd) {
        this.command = cmd;
        return this;
    }

    public void write(Path file) {
        try {
            if (file.getParent() != null) {
                Files.createDirectories(file.getParent());
            }
            Files.writeString(file, render(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    private double tx(double x) {
        return logX ? Math.log10(Math.max(x, 1e-300)) : x;
    }

    public String render() {
        double x0 = Double.POSITIVE_INFINITY;
        double x1 = Double.NEGATIVE_INFINITY;
        double y0 = Double.POSITIVE_INFINITY;
        double y1 = Double.NEGATIVE_INFINITY;
        for (Series s : series) {
            for (int i = 0; i < s.x.length; i++) {
                if (Double.isNaN(s.y[i]) || (logX && s.x[i] <= 0)) {
                    continue;
                }
                x0 = Math.min(x0, tx(s.x[i]));
                x1 = Math.max(x1, tx(s.x[i]));
                y0 = Math.min(y0, s.y[i]);
                y1 = Math.max(y1, s.y[i]);
            }
        }
        if (x0 == Double.POSITIVE_INFINITY) {
            x0 = 0;
            x1 = 1;
            y0 = 0;
            y1 = 1;
        }
        if (yMin != null) {
            y0 = yMin;
            y1 = yMax;
        } else {
            y0 = Math.min(0, y0);
        }
        if (x1 == x0) {
            x1 = x0 + 1;
        }
        if (y1 == y0) {
            y1 = y0 + 1;
        }
        double pw = W - LEFT - RIGHT;
        double ph = H - TOP - BOTTOM;
        StringBuilder b = header();
        // axes and ticks
        b.append(line(LEFT, TOP + ph, LEFT + pw, TOP + ph, "#000")).append(line(LEFT, TOP, LEFT, TOP + ph, "#000"));
        for (double t : ticks(y0, y1)) {
            double py = TOP + ph - (t - y0) / (y1 - y0) * ph;
            b.append(line(LEFT, py, LEFT + pw, py, "#e0e0e0"));
            b.append(text(LEFT - 6, py + 4, fmt(t), "end", 11));
        }
        if (logX) {
            for (int e = (int) Math.ceil(x0); e <= Math.floor(x1); e++) {
                double px = LEFT + (e - x0) / (x1 - x0) * pw;
                b.append(line(px, TOP + ph, px, TOP + ph + 5, "#000"));
                b.append(text(px, TOP + ph + 18, "1e" + e, "middle", 11));
            }
        } else {
            for (double t : ticks(x0, x1)) {
                double px = LEFT + (t - x0) / (x1 - x0) * pw;
                b.append(line(px, TOP + ph, px, TOP + ph + 5, "#000"));
                b.append(text(px, TOP + ph + 18, fmt(t), "middle", 11));
            }
        }
        b.append(text(LEFT + pw / 2, TOP + ph + 38, esc(xLabel), "middle", 12));
        b.append(String.format(Locale.ROOT,
                "<text x=\"16\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 16 %.1f)\">%s</text>%n",
                TOP + ph / 2, TOP + ph / 2, esc(yLabel)));
        // series
        for (int k = 0; k < series.size(); k++) {
            Series s = series.get(k);
            String color = COLORS[k % COLORS.length];
            StringBuilder path = new StringBuilder();
            boolean pen = false;
            int n = s.x.length;
            int step = Math.max(1, n / 600);
            for (int i = 0; i < n; i = (i + step < n || i == n - 1) ? i + step : n - 1) {
                if (Double.isNaN(s.y[i]) || (logX && s.x[i] <= 0)) {
                    pen = false;
                    continue;
                }
                double px = LEFT + (tx(s.x[i]) - x0) / (x1 - x0) * pw;
                double py = TOP + ph - (Math.max(y0, Math.min(y1, s.y[i])) - y0) / (y1 - y0) * ph;
                path.append(pen ? " L" : " M").append(String.format(Locale.ROOT, "%.1f %.1f", px, py));
                pen = true;
            }
            b.append("<path fill=\"none\" stroke-width=\"1.6\" stroke=\"").append(color).append("\" d=\"")
                    .append(path.toString().trim()).append("\"/>\n");
            double ly = TOP + 14 + k * 18;
            b.append(line(LEFT + pw + 12, ly - 4, LEFT + pw + 32, ly - 4, color));
            b.append(text(LEFT + pw + 36, ly, esc(s.name), "start", 11));
        }
        return footer(b);
    }

    /** A bar chart: one bar per label, value printed on the bar. */
    public static String bars(String title, String yLabel, List<String> labels, double[] values, String command) {
        SvgChart c = new SvgChart(title, "", yLabel).command(command);
        StringBuilder b = c.header();
        double pw = W - LEFT - RIGHT;
        double ph = H - TOP - BOTTOM;
        double max = 0;
        for (double v : values) {
            max = Math.max(max, v);
        }
        max = max <= 0 ? 1 : max * 1.1;
        b.append(line(LEFT, TOP + ph, LEFT + pw, TOP + ph, "#000")).append(line(LEFT, TOP, LEFT, TOP + ph, "#000"));
        for (double t : ticks(0, max)) {
            double py = TOP + ph - t / max * ph;
            b.append(line(LEFT, py, LEFT + pw, py, "#e0e0e0"));
            b.append(text(LEFT - 6, py + 4, fmt(t), "end", 11));
        }
        double slot = pw / Math.max(1, values.length);
        for (int i = 0; i < values.length; i++) {
            double bh = values[i] / max * ph;
            double x = LEFT + i * slot + slot * 0.15;
            b.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>%n",
                    x, TOP + ph - bh, slot * 0.7, bh, COLORS[i % COLORS.length]));
            b.append(text(x + slot * 0.35, TOP + ph - bh - 4, fmt(values[i]), "middle", 11));
            b.append(text(x + slot * 0.35, TOP + ph + 18, esc(labels.get(i)), "middle", 11));
        }
        b.append(String.format(Locale.ROOT,
                "<text x=\"16\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 16 %.1f)\">%s</text>%n",
                TOP + ph / 2, TOP + ph / 2, esc(yLabel)));
        return c.footer(b);
    }

    private StringBuilder header() {
        StringBuilder b = new StringBuilder();
        b.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        b.append(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">%n",
                W, H, W, H));
        b.append("<desc>").append(esc(command)).append("</desc>\n");
        b.append("<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n");
        b.append(text(W / 2.0, 24, esc(title), "middle", 15));
        return b;
    }

    private String footer(StringBuilder b) {
        if (!command.isEmpty()) {
            String c = command.length() > 120 ? command.substring(0, 117) + "..." : command;
            b.append(String.format(Locale.ROOT, "<text x=\"8\" y=\"%d\" font-size=\"10\" fill=\"#555\" font-family=\"monospace\">%s</text>%n",
                    H - 8, esc(c)));
        }
        b.append("</svg>\n");
        return b.toString();
    }

    static List<Double> ticks(double lo, double hi) {
        double span = hi - lo;
        double raw = span / 6;
        double mag = Math.pow(10, Math.floor(Math.log10(raw)));
        double step = mag;
        for (double m : new double[] {1, 2, 5, 10}) {
            if (raw <= m * mag) {
                step = m * mag;
                break;
            }
        }
        List<Double> out = new ArrayList<>();
        for (long k = (long) Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k++) {
            out.add(k == 0 ? 0 : k * step);
        }
        return out;
    }

    static String fmt(double v) {
        double a = Math.abs(v);
        if (a >= 1e9) {
            return String.format(Locale.ROOT, "%.3gG", v / 1e9);
        }
        if (a >= 1e6) {
            return String.format(Locale.ROOT, "%.3gM", v / 1e6);
        }
        if (a >= 1e4) {
            return String.format(Locale.ROOT, "%.3gk", v / 1e3);
        }
        if (a == Math.rint(a)) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return new java.math.BigDecimal(String.format(Locale.ROOT, "%.3g", v)).stripTrailingZeros().toPlainString();
    }

    private static String line(double x1, double y1, double x2, double y2, String color) {
        return String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>%n",
                x1, y1, x2, y2, color);
    }

    private static String text(double x, double y, String s, String anchor, int size) {
        return String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\">%s</text>%n",
                x, y, size, anchor, s);
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
