package io.ringshift.cli.internal.control;

import io.ringshift.protocol.AvroBytes;
import io.ringshift.schemas.avro.MemberSpec;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/** Number, time and table formatting of the control-plane commands (root locale, UTC). */
final class Text {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);

  private Text() {}

  /** A fraction as a percentage with two decimals: 0.0769 -> {@code 7.69%}. */
  static String percent(double fraction) {
    return String.format(Locale.ROOT, "%.2f%%", 100 * fraction);
  }


  /** The first 12 hex digits of a checksum: enough to tell epochs apart at a glance. */
  static String checksumPrefix(ByteBuffer checksum) {
    String hex = checksum == null ? "" : HexFormat.of().formatHex(AvroBytes.toArray(checksum));
    return hex.length() > 12 ? hex.substring(0, 12) : hex;
  }

  static int zoneCount(List<MemberSpec> members) {
    return (int) members.stream().map(MemberSpec::getZone).distinct().count();
  }

  static String time(long epochMillis) {
    return TIME.format(Instant.ofEpochMilli(epochMillis));
  }

  /** Left-aligned columns, two spaces apart, each as wide as its widest cell; the last column is not padded. */
  static List<String> table(List<List<String>> rows) {
    int columns = rows.stream().mapToInt(List::size).max().orElse(0);
    int[] width = new int[columns];
    for (List<String> row : rows) {
      for (int i = 0; i < row.size(); i++) {
        width[i] = Math.max(width[i], row.get(i).length());
      }
    }
    return rows.stream().map(row -> {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < row.size(); i++) {
        String cell = row.get(i);
        line.append(cell);
        if (i < row.size() - 1) {
          line.append(" ".repeat(width[i] - cell.length() + 2));
        }
      }
      return line.toString().stripTrailing();
    }).toList();
  }
}
