package io.ringshift.simulator.internal;

import java.util.ArrayList;
import java.util.List;

/** A plain-text table: left-aligned first column, right-aligned numbers, a dashed rule under the header. */
public final class TextTable {
  private final String[] headers;
  private final boolean[] leftAligned;
  private final List<String[]> rows = new ArrayList<>();
  private String[] groups;

  /** Columns whose header starts with {@code <} are left-aligned (the marker is not printed). */
  public TextTable(String... headers) {
    this.headers = new String[headers.length];
    this.leftAligned = new boolean[headers.length];
    for (int i = 0; i < headers.length; i++) {
      leftAligned[i] = headers[i].startsWith("<");
      this.headers[i] = leftAligned[i] ? headers[i].substring(1) : headers[i];
    }
  }

  /**
   * Group labels printed above the header, one per column; consecutive equal non-empty labels span their
   * columns and are centred over them.
   */
  public TextTable groups(String... labels) {
    if (labels.length != headers.length) {
      throw new IllegalStateException("groups has " + labels.length + " labels, table has " + headers.length);
    }
    this.groups = labels.clone();
    return this;
  }

  public TextTable row(String... cells) {
    if (cells.length != headers.length) {
      throw new IllegalStateException("row has " + cells.length + " cells, table has " + headers.length);
    }
    rows.add(cells);
    return this;
  }

  /** The table, each line indented by {@code indent} and ending with a newline. */
  public String render(String indent) {
    int[] width = new int[headers.length];
    for (int i = 0; i < headers.length; i++) {
      width[i] = headers[i].length();
      for (String[] row : rows) {
        width[i] = Math.max(width[i], row[i].length());
      }
    }
    if (groups != null) {
      widenForGroups(width);
    }
    StringBuilder out = new StringBuilder();
    if (groups != null) {
      groupLine(out, indent, width);
    }
    line(out, indent, headers, width);
    String[] rule = new String[headers.length];
    for (int i = 0; i < rule.length; i++) {
      rule[i] = "-".repeat(width[i]);
    }
    line(out, indent, rule, width);
    for (String[] row : rows) {
      line(out, indent, row, width);
    }
    return out.toString();
  }

  /** Widens the last column of a group whose label (plus a space each side) is wider than its columns. */
  private void widenForGroups(int[] width) {
    int i = 0;
    while (i < groups.length) {
      int j = i;
      int span = width[i];
      while (j + 1 < groups.length && !groups[i].isEmpty() && groups[j + 1].equals(groups[i])) {
        j++;
        span += 2 + width[j];
      }
      int needed = groups[i].isEmpty() ? 0 : groups[i].length() + 2;
      if (needed > span) {
        width[j] += needed - span;
      }
      i = j + 1;
    }
  }

  private void groupLine(StringBuilder out, String indent, int[] width) {
    StringBuilder line = new StringBuilder(indent);
    int i = 0;
    while (i < groups.length) {
      int j = i;
      int span = width[i];
      while (j + 1 < groups.length && !groups[i].isEmpty() && groups[j + 1].equals(groups[i])) {
        j++;
        span += 2 + width[j];
      }
      if (i > 0) {
        line.append("  ");
      }
      String label = groups[i];
      if (label.isEmpty()) {
        line.append(" ".repeat(span));
      } else {
        // Dashes on both sides make the span visible: "---- join ----".
        int free = Math.max(0, span - label.length() - 2);
        int before = free / 2;
        line.append("-".repeat(before)).append(' ').append(label).append(' ').append("-".repeat(free - before));
      }
      i = j + 1;
    }
    out.append(line.toString().stripTrailing()).append('\n');
  }

  private void line(StringBuilder out, String indent, String[] cells, int[] width) {
    StringBuilder line = new StringBuilder(indent);
    for (int i = 0; i < cells.length; i++) {
      if (i > 0) {
        line.append("  ");
      }
      String pad = " ".repeat(width[i] - cells[i].length());
      line.append(leftAligned[i] ? cells[i] + pad : pad + cells[i]);
    }
    out.append(line.toString().stripTrailing()).append('\n');
  }
}
