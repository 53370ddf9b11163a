package io.ringshift.simulator.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.DoubleFunction;

/**
 * Inline SVG charts for the HTML report, drawn from first principles: no library, no script, no external
 * reference. Colours and fonts come from CSS classes of the page ({@code s0..s5} for series), so the charts
 * follow the page's light or dark scheme. Titles and legends are HTML around the SVG.
 */
public final class Charts {
  private Charts() {}

  /** A value axis: linear from 0, or logarithmic. */
  public record Scale(double min, double max, boolean log, double base) {
    public static Scale linear(double max) {
      return new Scale(0, niceCeil(max), false, 0);
    }

    public static Scale linear(double min, double max) {
      return new Scale(min, niceCeil(max), false, 0);
    }

    /** Decades. */
    public static Scale log(double min, double max) {
      return log(min, max, 10);
    }

    /** Ticks at powers of {@code base}, e.g. 32 for byte sizes (1 KiB, 32 KiB, 1 MiB, ...). */
    public static Scale log(double min, double max, double base) {
      double lo = Math.pow(base, Math.floor(Math.log(min) / Math.log(base) + 1e-9));
      double hi = Math.pow(base, Math.ceil(Math.log(max) / Math.log(base) - 1e-9));
      return new Scale(lo, Math.max(hi, lo * base), true, base);
    }

    /** Position of {@code v} in [0, 1]. */
    double at(double v) {
      if (log) {
        double c = Math.max(v, min);
        return (Math.log(c) - Math.log(min)) / (Math.log(max) - Math.log(min));
      }
      return max == min ? 0 : (v - min) / (max - min);
    }

    List<Double> ticks() {
      List<Double> ticks = new ArrayList<>();
      if (log) {
        for (double t = min; t <= max * 1.0001; t *= base) {
          ticks.add(t);
        }
        return ticks;
      }
      double step = niceStep(max - min);
      for (double t = min; t <= max + step * 1e-6; t += step) {
        ticks.add(t);
      }
      return ticks;
    }
  }

  /** One group of horizontal bars (one bar per series) with an optional marker line (the ideal). */
  public record Group(String label, String sublabel, double[] values, String[] valueLabels, Double marker) {}

  /** One line of a line chart; {@code css} picks its colour. */
  public record Line(String name, String css, double[] ys, boolean dashed) {}

  /** Horizontal grouped bars; bar {@code i} of every group uses class {@code seriesCss[i]}. */
  public static String hbars(List<Group> groups, String[] seriesCss, Scale scale, DoubleFunction<String> tickFormat,
      int width, String ariaLabel) {
    // Room for the longest label (12.5 px bold) or sublabel (10.5 px), at about 0.6 em per character.
    double labelW = 0;
    for (Group g : groups) {
      labelW = Math.max(labelW, g.label().length() * 7.8);
      if (g.sublabel() != null) {
        labelW = Math.max(labelW, g.sublabel().length() * 6.0);
      }
    }
    int left = (int) Math.max(70, Math.min(280, labelW + 18));
    int right = 74;
    int barH = 13;
    int barGap = 3;
    int groupGap = 16;
    int bars = seriesCss.length;
    // A group needs room for its label and sublabel even when it has a single bar.
    int groupH = Math.max(bars * barH + (bars - 1) * barGap, 28);
    int top = 6;
    int plotH = groups.size() * (groupH + groupGap) - groupGap;
    int height = top + plotH + 30;
    double plotW = width - left - right;
    Svg svg = new Svg(width, height, ariaLabel);
    for (double t : scale.ticks()) {
      double x = left + plotW * scale.at(t);
      svg.line(x, top - 2, x, top + plotH + 4, "grid");
      svg.text(x, top + plotH + 18, tickFormat.apply(t), "tick", "middle");
    }
    double y = top;
    for (Group g : groups) {
      svg.text(left - 10, y + groupH / 2.0 + (g.sublabel() == null ? 4 : -2), g.label(), "label", "end");
      if (g.sublabel() != null) {
        svg.text(left - 10, y + groupH / 2.0 + 12, g.sublabel(), "sublabel", "end");
      }
      if (g.marker() != null) {
        double mx = left + plotW * scale.at(g.marker());
        svg.line(mx, y - 4, mx, y + groupH + 4, "marker");
      }
      double barsH = bars * barH + (bars - 1) * barGap;
      for (int i = 0; i < bars; i++) {
        double v = g.values()[i];
        if (Double.isNaN(v)) {
          continue;
        }
        double by = y + (groupH - barsH) / 2 + i * (barH + barGap);
        double x0 = left + plotW * scale.at(scale.log() ? scale.min() : 0);
        double x1 = left + plotW * Math.min(1, scale.at(v));
        svg.rect(x0, by, Math.max(1, x1 - x0), barH, seriesCss[i]);
        if (g.valueLabels() != null && g.valueLabels()[i] != null) {
          svg.text(x1 + 4, by + barH - 3, g.valueLabels()[i], "value", "start");
        }
      }
      y += groupH + groupGap;
    }
    svg.line(left, top + plotH + 4, left + plotW, top + plotH + 4, "axis");
    return svg.close();
  }

  /**
   * A line chart over x values that are equally spaced (the V sweep's powers of two); {@code highlight} is an
   * x value to mark with a band, or null.
   */
  public static String lines(double[] xs, String[] xLabels, List<Line> lines, Scale scale, DoubleFunction<String> yFormat,
      Double highlight, int width, int height, String ariaLabel) {
    int left = 52;
    int right = 14;
    int top = 10;
    int bottom = 30;
    double plotW = width - left - right;
    double plotH = height - top - bottom;
    Svg svg = new Svg(width, height, ariaLabel);
    for (double t : scale.ticks()) {
      double y = top + plotH * (1 - scale.at(t));
      svg.line(left, y, left + plotW, y, "grid");
      svg.text(left - 6, y + 4, yFormat.apply(t), "tick", "end");
    }
    double step = xs.length > 1 ? plotW / (xs.length - 1) : 0;
    for (int i = 0; i < xs.length; i++) {
      double x = left + i * step;
      if (highlight != null && xs[i] == highlight) {
        svg.rect(x - step / 2, top, step, plotH, "band");
      }
      svg.text(x, top + plotH + 16, xLabels[i], "tick", "middle");
    }
    svg.line(left, top + plotH, left + plotW, top + plotH, "axis");
    for (Line line : lines) {
      StringBuilder points = new StringBuilder();
      for (int i = 0; i < xs.length; i++) {
        double x = left + i * step;
        double y = top + plotH * (1 - Math.max(0, Math.min(1, scale.at(line.ys()[i]))));
        points.append(Svg.num(x)).append(',').append(Svg.num(y)).append(' ');
      }
      svg.polyline(points.toString().trim(), line.css() + (line.dashed() ? " dashed" : ""));
      if (!line.dashed()) {
        for (int i = 0; i < xs.length; i++) {
          double y = top + plotH * (1 - Math.max(0, Math.min(1, scale.at(line.ys()[i]))));
          svg.circle(left + i * step, y, 2.6, line.css());
        }
      }
    }
    return svg.close();
  }

  /** A histogram of values with {@code bins} bins over [lo, hi]; a dashed line at {@code mark}. */
  public static String histogram(double[] values, double lo, double hi, int bins, String css, double mark,
      DoubleFunction<String> xFormat, int width, int height, String ariaLabel) {
    int left = 30;
    int right = 10;
    int top = 8;
    int bottom = 28;
    int[] counts = new int[bins];
    for (double v : values) {
      int b = (int) Math.floor((v - lo) / (hi - lo) * bins);
      counts[Math.max(0, Math.min(bins - 1, b))]++;
    }
    int max = 1;
    for (int c : counts) {
      max = Math.max(max, c);
    }
    Scale yScale = Scale.linear(max);
    double plotW = width - left - right;
    double plotH = height - top - bottom;
    Svg svg = new Svg(width, height, ariaLabel);
    for (double t : yScale.ticks()) {
      double y = top + plotH * (1 - yScale.at(t));
      svg.line(left, y, left + plotW, y, "grid");
      svg.text(left - 5, y + 4, String.format(Locale.ROOT, "%.0f", t), "tick", "end");
    }
    double bw = plotW / bins;
    for (int b = 0; b < bins; b++) {
      if (counts[b] > 0) {
        double h = plotH * yScale.at(counts[b]);
        svg.rect(left + b * bw + 0.5, top + plotH - h, Math.max(0.5, bw - 1), h, css);
      }
    }
    Scale xScale = new Scale(lo, hi, false, 0);
    for (double t : niceTicks(lo, hi, 5)) {
      double x = left + plotW * xScale.at(t);
      svg.text(x, top + plotH + 16, xFormat.apply(t), "tick", "middle");
      svg.line(x, top + plotH, x, top + plotH + 4, "axis");
    }
    if (mark >= lo && mark <= hi) {
      double x = left + plotW * xScale.at(mark);
      svg.line(x, top, x, top + plotH, "marker");
    }
    svg.line(left, top + plotH, left + plotW, top + plotH, "axis");
    return svg.close();
  }

  /**
   * One horizontal bar per row, split into one segment per contributor (largest first), so one glance shows
   * whether a load comes from one node or from many.
   */
  public static String segments(List<String> labels, List<List<Long>> parts, List<String> captions, String css, int width,
      String ariaLabel) {
    int left = 80;
    int right = 250;
    int rowH = 22;
    int gap = 10;
    int height = labels.size() * (rowH + gap) + 4;
    double plotW = width - left - right;
    Svg svg = new Svg(width, height, ariaLabel);
    double y = 2;
    for (int i = 0; i < labels.size(); i++) {
      svg.text(left - 10, y + rowH / 2.0 + 4, labels.get(i), "label", "end");
      long total = 0;
      for (long v : parts.get(i)) {
        total += v;
      }
      double x = left;
      int k = 0;
      for (long v : parts.get(i)) {
        double w = total == 0 ? 0 : plotW * v / total;
        svg.rect(x, y, Math.max(0.3, w), rowH, css + (k++ % 2 == 0 ? "" : " alt"));
        x += w;
      }
      if (total == 0) {
        svg.rect(left, y, plotW, rowH, "band");
      }
      svg.text(left + plotW + 10, y + rowH / 2.0 + 4, captions.get(i), "value", "start");
      y += rowH + gap;
    }
    return svg.close();
  }

  static double niceCeil(double max) {
    if (max <= 0) {
      return 1;
    }
    double step = niceStep(max);
    return Math.ceil(max / step - 1e-9) * step;
  }

  /** A 1, 2 or 5 times a power of ten step giving about five ticks over {@code span}. */
  static double niceStep(double span) {
    if (span <= 0) {
      return 1;
    }
    double raw = span / 5;
    double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    double r = raw / magnitude;
    double nice = r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10;
    return nice * magnitude;
  }

  static List<Double> niceTicks(double lo, double hi, int target) {
    double step = niceStep((hi - lo) * 5.0 / target);
    List<Double> ticks = new ArrayList<>();
    for (double t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-6; t += step) {
      ticks.add(Math.abs(t) < step * 1e-9 ? 0 : t);
    }
    return ticks;
  }

  /** Escapes text for HTML element content and attribute values. */
  public static String escape(String s) {
    StringBuilder out = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '&' -> out.append("&amp;");
        case '<' -> out.append("&lt;");
        case '>' -> out.append("&gt;");
        case '"' -> out.append("&quot;");
        case '\'' -> out.append("&#39;");
        default -> out.append(c);
      }
    }
    return out.toString();
  }

  /** A minimal SVG writer: numbers with at most two decimals, text escaped. */
  static final class Svg {
    private final StringBuilder s = new StringBuilder();

    Svg(int width, int height, String ariaLabel) {
      s.append("<svg viewBox=\"0 0 ").append(width).append(' ').append(height).append("\" width=\"").append(width)
          .append("\" height=\"").append(height).append("\" role=\"img\" aria-label=\"")
          .append(escape(ariaLabel)).append("\">");
    }

    void line(double x1, double y1, double x2, double y2, String css) {
      s.append("<line x1=\"").append(num(x1)).append("\" y1=\"").append(num(y1)).append("\" x2=\"").append(num(x2))
          .append("\" y2=\"").append(num(y2)).append("\" class=\"").append(css).append("\"/>");
    }

    void rect(double x, double y, double w, double h, String css) {
      s.append("<rect x=\"").append(num(x)).append("\" y=\"").append(num(y)).append("\" width=\"").append(num(w))
          .append("\" height=\"").append(num(h)).append("\" class=\"").append(css).append("\"/>");
    }

    void circle(double x, double y, double r, String css) {
      s.append("<circle cx=\"").append(num(x)).append("\" cy=\"").append(num(y)).append("\" r=\"").append(num(r))
          .append("\" class=\"").append(css).append(" dot\"/>");
    }

    void polyline(String points, String css) {
      s.append("<polyline points=\"").append(points).append("\" class=\"").append(css).append(" stroke\"/>");
    }

    void text(double x, double y, String text, String css, String anchor) {
      s.append("<text x=\"").append(num(x)).append("\" y=\"").append(num(y)).append("\" class=\"").append(css)
          .append("\" text-anchor=\"").append(anchor).append("\">").append(escape(text)).append("</text>");
    }

    String close() {
      return s.append("</svg>").toString();
    }

    static String num(double v) {
      if (v == Math.rint(v)) {
        return Long.toString((long) v);
      }
      return String.format(Locale.ROOT, "%.2f", v);
    }
  }
}
