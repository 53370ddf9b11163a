package io.ringshift.storage.internal.http;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The little JSON the node API speaks for its small answers: objects, arrays, strings, integers, booleans and
 * null. Written by hand because the storage module takes no JSON dependency; it reads only what {@link #write}
 * produces and any equivalent JSON, and refuses anything else with {@link IllegalArgumentException}.
 */
final class Json {
  private static final int MAX_DEPTH = 16;

  private final String text;
  private int at;

  private Json(String text) {
    this.text = text;
  }

  /** Renders maps (objects), lists, strings, numbers, booleans and null. */
  static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(value, out);
    return out.toString();
  }

  private static void write(Object value, StringBuilder out) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof String s) {
      quote(s, out);
    } else if (value instanceof Number || value instanceof Boolean) {
      out.append(value);
    } else if (value instanceof Map<?, ?> map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        quote(String.valueOf(e.getKey()), out);
        out.append(':');
        write(e.getValue(), out);
      }
      out.append('}');
    } else if (value instanceof List<?> list) {
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        write(list.get(i), out);
      }
      out.append(']');
    } else {
      throw new IllegalArgumentException("cannot write a " + value.getClass().getName() + " as JSON");
    }
  }

  private static void quote(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  /** Parses one JSON value; objects become {@code Map<String, Object>}, integers {@code Long}. */
  static Object parse(String text) {
    Json p = new Json(text);
    Object value = p.value(0);
    p.space();
    if (p.at != text.length()) {
      throw p.error("unexpected text after the value");
    }
    return value;
  }

  /** Parses a JSON object. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> object(String text) {
    Object value = parse(text);
    if (!(value instanceof Map)) {
      throw new IllegalArgumentException("expected a JSON object, got " + text);
    }
    return (Map<String, Object>) value;
  }

  private Object value(int depth) {
    if (depth > MAX_DEPTH) {
      throw error("nested deeper than " + MAX_DEPTH);
    }
    space();
    if (at >= text.length()) {
      throw error("the text ends where a value should start");
    }
    char c = text.charAt(at);
    return switch (c) {
      case '{' -> object(depth);
      case '[' -> array(depth);
      case '"' -> string();
      case 't' -> literal("true", Boolean.TRUE);
      case 'f' -> literal("false", Boolean.FALSE);
      case 'n' -> literal("null", null);
      default -> number();
    };
  }

  private Map<String, Object> object(int depth) {
    Map<String, Object> map = new LinkedHashMap<>();
    at++;
    space();
    if (peek('}')) {
      at++;
      return map;
    }
    while (true) {
      space();
      if (!peek('"')) {
        throw error("expected a quoted field name");
      }
      String key = string();
      space();
      expect(':');
      map.put(key, value(depth + 1));
      space();
      if (peek(',')) {
        at++;
      } else {
        expect('}');
        return map;
      }
    }
  }

  private List<Object> array(int depth) {
    List<Object> list = new ArrayList<>();
    at++;
    space();
    if (peek(']')) {
      at++;
      return list;
    }
    while (true) {
      list.add(value(depth + 1));
      space();
      if (peek(',')) {
        at++;
      } else {
        expect(']');
        return list;
      }
    }
  }

  private String string() {
    at++;
    StringBuilder out = new StringBuilder();
    while (at < text.length()) {
      char c = text.charAt(at++);
      if (c == '"') {
        return out.toString();
      }
      if (c != '\\') {
        out.append(c);
        continue;
      }
      if (at >= text.length()) {
        break;
      }
      char e = text.charAt(at++);
      switch (e) {
        case '"', '\\', '/' -> out.append(e);
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case 'n' -> out.append('\n');
        case 'r' -> out.append('\r');
        case 't' -> out.append('\t');
        case 'u' -> {
          if (at + 4 > text.length()) {
            throw error("a \\u escape needs four hex digits");
          }
          out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
          at += 4;
        }
        default -> throw error("unknown escape \\" + e);
      }
    }
    throw error("unterminated string");
  }

  private Object literal(String word, Object value) {
    if (!text.startsWith(word, at)) {
      throw error("expected " + word);
    }
    at += word.length();
    return value;
  }

  private Long number() {
    int start = at;
    if (peek('-')) {
      at++;
    }
    while (at < text.length() && Character.isDigit(text.charAt(at))) {
      at++;
    }
    if (at == start || (at == start + 1 && text.charAt(start) == '-')) {
      throw error("expected a value");
    }
    try {
      return Long.parseLong(text.substring(start, at));
    } catch (NumberFormatException e) {
      throw error("number out of range");
    }
  }

  private void space() {
    while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
      at++;
    }
  }

  private boolean peek(char c) {
    return at < text.length() && text.charAt(at) == c;
  }

  private void expect(char c) {
    if (!peek(c)) {
      throw error("expected '" + c + "'");
    }
    at++;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("malformed JSON at character " + at + ": " + what);
  }
}
